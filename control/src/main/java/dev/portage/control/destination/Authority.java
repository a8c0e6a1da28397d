package dev.portage.control.destination;

import io.netty.util.NetUtil;
import java.util.Locale;

/**
 * A parsed {@code GetDestination.path}: a Kubernetes service FQDN with a port, as Linkerd accepts it.
 *
 * <p>Accepted: {@code <svc>.<ns>.svc.<cluster-domain>[:port]} and the StatefulSet pod form {@code
 * <hostname>.<svc>.<ns>.svc.<cluster-domain>[:port]} (only endpoints with that hostname); a trailing
 * dot is allowed; the port defaults to 80 as in Linkerd. Rejected (InvalidArgument at the boundary):
 * IP literals, short names such as {@code web} or {@code web.default}, another cluster domain, a bad
 * port.
 *
 * @param hostname the pod hostname of the StatefulSet form, or null
 */
record Authority(ServiceRef service, String hostname, int port, String fqdn) {

  static final int DEFAULT_PORT = 80;

  /**
   * Parses an authority.
   *
   * @throws IllegalArgumentException with a message saying what was expected
   */
  static Authority parse(String path, String clusterDomain) {
    if (path == null || path.isEmpty()) {
      throw new IllegalArgumentException("path: empty (expected: <service>.<namespace>.svc." + clusterDomain + ":<port>)");
    }
    String host = path;
    int port = DEFAULT_PORT;
    if (path.startsWith("[")) {
      throw new IllegalArgumentException("path: " + path + " is an IP address (expected: a service name)");
    }
    int colon = path.lastIndexOf(':');
    if (colon >= 0) {
      host = path.substring(0, colon);
      String p = path.substring(colon + 1);
      if (host.indexOf(':') >= 0) {
        throw new IllegalArgumentException("path: " + path + " is an IP address (expected: a service name)");
      }
      port = parsePort(p, path);
    }
    if (NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host)) {
      throw new IllegalArgumentException("path: " + path + " is an IP address (expected: a service name)");
    }
    host = host.toLowerCase(Locale.ROOT);
    if (host.endsWith(".")) {
      host = host.substring(0, host.length() - 1);
    }
    String suffix = ".svc." + clusterDomain.toLowerCase(Locale.ROOT);
    if (!host.endsWith(suffix)) {
      throw new IllegalArgumentException(
          "path: " + path + " (expected: <service>.<namespace>.svc." + clusterDomain + ":<port>)");
    }
    String[] labels = host.substring(0, host.length() - suffix.length()).split("\\.", -1);
    for (String l : labels) {
      if (!isDnsLabel(l)) {
        throw new IllegalArgumentException("path: " + path + " has an invalid DNS label \"" + l + "\"");
      }
    }
    return switch (labels.length) {
      case 2 -> new Authority(new ServiceRef(labels[1], labels[0]), null, port, host);
      case 3 -> new Authority(
          new ServiceRef(labels[2], labels[1]), labels[0], port, labels[1] + "." + labels[2] + suffix);
      default -> throw new IllegalArgumentException(
          "path: " + path + " (expected: <service>.<namespace>.svc." + clusterDomain + ":<port>)");
    };
  }

  private static int parsePort(String p, String path) {
    if (p.isEmpty() || p.length() > 5 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException("path: " + path + " has an invalid port (expected: 1..65535)");
    }
    int port = Integer.parseInt(p);
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("path: " + path + " has port " + port + " (expected: 1..65535)");
    }
    return port;
  }

  private static boolean isDnsLabel(String l) {
    if (l.isEmpty() || l.length() > 63 || l.startsWith("-") || l.endsWith("-")) {
      return false;
    }
    for (int i = 0; i < l.length(); i++) {
      char c = l.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-')) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return (hostname == null ? "" : hostname + ".") + fqdn + ":" + port;
  }
}
