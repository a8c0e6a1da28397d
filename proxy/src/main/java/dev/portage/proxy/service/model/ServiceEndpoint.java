package dev.portage.proxy.service.model;

import java.util.Objects;

/**
 * One endpoint of a Service port, with the EndpointSlice conditions kube-proxy reads. A missing
 * {@code ready} condition counts as ready and a missing {@code serving} one as equal to ready (the
 * API's rules). Immutable.
 *
 * @param ip the endpoint's IPv4 address, in dotted form
 * @param port the endpoint's port of this Service port
 * @param ready ready to receive new connections
 * @param serving serving traffic (true while terminating too, if it still answers)
 * @param terminating being deleted
 * @param local on this proxy's node ({@code nodeName} equals the proxy's hostname)
 */
public record ServiceEndpoint(
    String ip, int port, boolean ready, boolean serving, boolean terminating, boolean local) {

  public ServiceEndpoint {
    Objects.requireNonNull(ip, "ip");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
  }

  /** A ready, serving, non-terminating endpoint. */
  public static ServiceEndpoint ready(String ip, int port, boolean local) {
    return new ServiceEndpoint(ip, port, true, true, false, local);
  }

  /** {@code ip:port}. */
  public String address() {
    return ip + ":" + port;
  }

  /** kube-proxy's fallback: serving but terminating endpoints are used when none is ready. */
  boolean servingTerminating() {
    return serving && terminating;
  }
}
