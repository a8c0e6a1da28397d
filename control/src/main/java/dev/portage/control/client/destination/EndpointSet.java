package dev.portage.control.client.destination;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The whole current endpoint set of one destination. Immutable.
 *
 * @param exists false when the control plane said the service does not exist ({@code
 *     no_endpoints{exists:false}}): the caller may fall back to DNS; true otherwise, even when empty
 * @param endpoints by address
 */
public record EndpointSet(boolean exists, Map<InetSocketAddress, ResolvedEndpoint> endpoints) {

  public EndpointSet {
    endpoints = Map.copyOf(endpoints);
  }

  public boolean isEmpty() {
    return endpoints.isEmpty();
  }
}
