package dev.portage.hub.remote;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;

/**
 * One API server the hub proxies to, from a {@code --server-addr} URL such as {@code
 * https://10.0.0.1:6443}. Immutable.
 *
 * @param url the URL as configured
 * @param address host and port to connect to (unresolved: resolved at each connect)
 * @param tls whether the scheme is {@code https}
 * @param hostHeader the {@code Host} header for requests to this server, derived from {@code
 *     address} once rather than per request
 */
public record ApiServer(String url, InetSocketAddress address, boolean tls, String hostHeader) {

  public ApiServer {
    Objects.requireNonNull(url, "url");
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(hostHeader, "hostHeader");
  }

  public ApiServer(String url, InetSocketAddress address, boolean tls) {
    this(url, address, tls, hostHeaderOf(address));
  }

  /**
   * Parses {@code http://host[:port]} or {@code https://host[:port]} (default ports 80 and 443); a
   * trailing "/" is allowed, any other path is not.
   *
   * @throws IllegalArgumentException saying what is wrong with the URL
   */
  public static ApiServer parse(String url) {
    Objects.requireNonNull(url, "url");
    URI uri;
    try {
      uri = new URI(url.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("server-addr: " + url + " (" + e.getReason() + ")");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException(
          "server-addr: " + url + " (expected: an http:// or https:// URL)");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("server-addr: " + url + " (expected: a host)");
    }
    String path = uri.getRawPath();
    if ((path != null && !path.isEmpty() && !path.equals("/")) || uri.getRawQuery() != null) {
      throw new IllegalArgumentException(
          "server-addr: " + url + " (expected: no path or query)");
    }
    boolean tls = scheme.equals("https");
    int port = uri.getPort() > 0 ? uri.getPort() : tls ? 443 : 80;
    String host = uri.getHost();
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new ApiServer(url.trim(), InetSocketAddress.createUnresolved(host, port), tls);
  }

  private static String hostHeaderOf(InetSocketAddress address) {
    Objects.requireNonNull(address, "address");
    String host = address.getHostString();
    if (host.indexOf(':') >= 0) {
      host = "[" + host + "]";
    }
    return host + ":" + address.getPort();
  }

  @Override
  public String toString() {
    return url;
  }
}
