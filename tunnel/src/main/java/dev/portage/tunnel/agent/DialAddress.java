package dev.portage.tunnel.agent;

import io.netty.util.NetUtil;

/**
 * The {@code host:port} of a DIAL_REQ, split the way Go's {@code net.SplitHostPort} does
 * ({@code [v6]:port} for IPv6 literals). Error messages read like Go's, since they travel back to
 * the server in DIAL_RSP.error.
 */
record DialAddress(String host, int port) {

  static DialAddress parse(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("address " + address + ": missing port in address");
    }
    String host = address.substring(0, colon);
    String portText = address.substring(colon + 1);
    if (host.startsWith("[")) {
      if (!host.endsWith("]")) {
        throw new IllegalArgumentException("address " + address + ": missing ']' in address");
      }
      host = host.substring(1, host.length() - 1);
    } else if (host.indexOf(':') >= 0) {
      throw new IllegalArgumentException("address " + address + ": too many colons in address");
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("address " + address + ": invalid port");
    }
    if (port < 0 || port > 65535 || portText.startsWith("+")) {
      throw new IllegalArgumentException("address " + address + ": invalid port");
    }
    return new DialAddress(host, port);
  }

  /** The literal IP bytes, or null when the host is a name that needs a lookup. */
  byte[] literal() {
    if (host.isEmpty()) {
      return new byte[] {127, 0, 0, 1}; // Go dials the local system for an empty host
    }
    return NetUtil.createByteArrayFromIpAddressString(host);
  }
}
