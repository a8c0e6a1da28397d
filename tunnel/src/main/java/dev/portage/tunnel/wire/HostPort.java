package dev.portage.tunnel.wire;

/**
 * The host part of a Konnectivity dial address ({@code host:port}, {@code [v6]:port}), the way the
 * {@code destHost} strategy and HTTP {@code CONNECT} see it. Stateless.
 */
public final class HostPort {
  private HostPort() {}

  /** The host of {@code address} without brackets; the whole string when it has no port. */
  public static String host(String address) {
    if (address.startsWith("[")) {
      int close = address.indexOf(']');
      return close < 0 ? address : address.substring(1, close);
    }
    int colon = address.lastIndexOf(':');
    if (colon < 0 || address.indexOf(':') != colon) {
      return address; // no port, or a bare IPv6 literal
    }
    return address.substring(0, colon);
  }
}
