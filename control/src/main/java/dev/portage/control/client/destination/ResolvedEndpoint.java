package dev.portage.control.client.destination;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Objects;

/**
 * One endpoint of a destination as the control plane announced it.
 *
 * @param address the IP address and port (never resolved by name)
 * @param weight relative weight ({@code 10000} by default in Linkerd; unsigned on the wire, clamped
 *     to {@code Integer.MAX_VALUE})
 * @param labels metric labels of the set merged with the endpoint's own (the endpoint's win)
 */
public record ResolvedEndpoint(InetSocketAddress address, int weight, Map<String, String> labels) {

  public ResolvedEndpoint {
    Objects.requireNonNull(address, "address");
    labels = Map.copyOf(labels);
  }
}
