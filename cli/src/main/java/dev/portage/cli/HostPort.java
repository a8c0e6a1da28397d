package dev.portage.cli;

/**
 * A {@code host:port} flag value as kube-proxy takes its bind addresses: {@code 0.0.0.0:10256},
 * {@code 127.0.0.1} (default port), {@code :10249} (all addresses), or empty (disabled).
 *
 * @param host the address to bind
 * @param port the port
 */
record HostPort(String host, int port) {

  /**
   * Parses {@code value} of flag {@code flag}.
   *
   * @return null for an empty value (the server is disabled)
   * @throws IllegalArgumentException naming the flag for anything else
   */
  static HostPort parse(String flag, String value, int defaultPort) {
    String v = value.strip();
    if (v.isEmpty()) {
      return null;
    }
    int colon = v.lastIndexOf(':');
    if (colon < 0 || v.startsWith("[") && !v.contains("]:")) {
      return new HostPort(v, defaultPort);
    }
    String host = v.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    try {
      int port = Integer.parseInt(v.substring(colon + 1));
      if (port < 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return new HostPort(host.isEmpty() ? "0.0.0.0" : host, port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + ": " + value + " (expected: host:port, e.g. 0.0.0.0:" + defaultPort + ")");
    }
  }
}
