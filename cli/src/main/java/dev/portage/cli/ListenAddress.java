package dev.portage.cli;

/**
 * A listen address as Go programs and Linkerd's proxy write it: {@code host:port}, {@code :port}
 * (every interface: {@code 0.0.0.0}) or {@code [v6]:port}. Upstream flags and environment variables
 * give one value where Portage has a bind-address flag and a port flag.
 *
 * @param host the address to bind, without brackets
 * @param port 0..65535
 */
record ListenAddress(String host, int port) {

  /**
   * {@code value} split into host and port, or {@code host:port} as given when {@code value} is null.
   *
   * @param what the flag or variable named in the error
   * @throws IllegalArgumentException naming {@code what} and the expected form
   */
  static ListenAddress parse(String what, String value, String host, int port) {
    if (value == null) {
      return new ListenAddress(host, port);
    }
    int colon = value.lastIndexOf(':');
    String h = colon < 0 ? "" : value.substring(0, colon);
    String p = colon < 0 ? "" : value.substring(colon + 1);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    } else if (h.contains(":")) {
      h = null; // an IPv6 address needs its brackets
    }
    int parsed = -1;
    try {
      parsed = Integer.parseInt(p);
    } catch (NumberFormatException e) {
      // reported below
    }
    if (h == null || parsed < 0 || parsed > 65535) {
      throw new IllegalArgumentException(
          what + ": '" + value + "' (expected: [HOST]:PORT such as :8086, 127.0.0.1:4140 or [::1]:4191)");
    }
    return new ListenAddress(h.isEmpty() ? "0.0.0.0" : h, parsed);
  }
}
