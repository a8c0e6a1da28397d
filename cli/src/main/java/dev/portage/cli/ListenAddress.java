package dev.portage.cli;

/**
 * A listen address given as one flag or environment value, in the forms Go programs, kube-proxy and
 * Linkerd's proxy write it: {@code host:port}, {@code :port} (every interface: {@code 0.0.0.0}) or
 * {@code [v6]:port}; kube-proxy's bind-address flags also take a host alone (default port) or an
 * empty value (server disabled). Upstream flags give one value where Portage has a bind-address flag
 * and a port flag.
 *
 * @param host the address to bind, without brackets
 * @param port 0..65535
 */
record ListenAddress(String host, int port) {

  /**
   * {@code value} split into host and port (the port is required), or {@code host:port} as given
   * when {@code value} is null.
   *
   * @param what the flag or variable named in the error
   * @throws IllegalArgumentException naming {@code what} and the expected form
   */
  static ListenAddress parse(String what, String value, String host, int port) {
    if (value == null) {
      return new ListenAddress(host, port);
    }
    int colon = value.lastIndexOf(':');
    String h = colon < 0 ? null : unbracket(value.substring(0, colon));
    int parsed = colon < 0 ? -1 : port(value.substring(colon + 1));
    if (h == null || parsed < 0) {
      throw new IllegalArgumentException(
          what + ": '" + value + "' (expected: [HOST]:PORT such as :8086, 127.0.0.1:4140 or [::1]:4191)");
    }
    return new ListenAddress(h.isEmpty() ? "0.0.0.0" : h, parsed);
  }

  /**
   * {@code value} of kube-proxy's bind-address flag {@code flag}: {@code 0.0.0.0:10256}, {@code
   * 127.0.0.1} (the default port), {@code :10249} (every interface) or empty.
   *
   * @return null for an empty value (the server is disabled)
   * @throws IllegalArgumentException naming the flag for anything else
   */
  static ListenAddress parseOptionalPort(String flag, String value, int defaultPort) {
    String v = value.strip();
    if (v.isEmpty()) {
      return null;
    }
    int colon = v.lastIndexOf(':');
    if (colon < 0 || v.startsWith("[") && !v.contains("]:")) {
      return new ListenAddress(v.startsWith("[") && v.endsWith("]") ? v.substring(1, v.length() - 1) : v, defaultPort);
    }
    String host = unbracket(v.substring(0, colon));
    int port = port(v.substring(colon + 1));
    if (host == null || port < 0) {
      throw new IllegalArgumentException(flag + ": " + value + " (expected: host:port, e.g. 0.0.0.0:" + defaultPort + ")");
    }
    return new ListenAddress(host.isEmpty() ? "0.0.0.0" : host, port);
  }

  /** The host without its brackets; null for an IPv6 address written without them. */
  private static String unbracket(String host) {
    if (host.startsWith("[") && host.endsWith("]")) {
      return host.substring(1, host.length() - 1);
    }
    return host.contains(":") ? null : host;
  }

  /** The port, or -1 when {@code text} is not a number in 0..65535. */
  private static int port(String text) {
    try {
      int p = Integer.parseInt(text);
      return p >= 0 && p <= 65535 ? p : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
