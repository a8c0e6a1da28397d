package dev.portage.proxy.mesh;

import java.util.Locale;

/**
 * The absolute form of an HTTP/1.1 request target ({@code http://host:port/path?query}, RFC 9112
 * §3.2.2), as clients configured with a proxy send it: its authority, whether it names the same
 * authority as the {@code Host} header (each with the scheme's default port when it has none), and
 * the origin form the endpoint is sent. Stateless.
 */
final class AbsoluteForm {

  private AbsoluteForm() {}

  /**
   * The authority of an {@code http://} or {@code https://} target, or null when {@code uri} is not
   * in absolute form (or has an empty authority, or user information, which HTTP forbids).
   */
  static String authority(String uri) {
    int start = schemeEnd(uri);
    if (start < 0) {
      return null;
    }
    int end = start;
    while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
      end++;
    }
    String authority = uri.substring(start, end);
    return authority.isEmpty() || authority.indexOf('@') >= 0 ? null : authority;
  }

  /**
   * Whether the target's {@code authority} and the {@code Host} header name the same host and port,
   * comparing host names without case and filling in the default port of the target's scheme.
   */
  static boolean sameAuthority(String uri, String authority, String host) {
    int defaultPort = uri.regionMatches(true, 0, "https://", 0, 8) ? 443 : 80;
    return normalise(authority, defaultPort).equals(normalise(host.trim(), defaultPort));
  }

  /** The path and query of an absolute-form target, {@code /} when it has none. */
  static String originForm(String uri) {
    int start = schemeEnd(uri);
    int slash = start;
    while (slash < uri.length() && "/?#".indexOf(uri.charAt(slash)) < 0) {
      slash++;
    }
    String rest = uri.substring(slash);
    int hash = rest.indexOf('#');
    if (hash >= 0) {
      rest = rest.substring(0, hash);
    }
    if (rest.isEmpty()) {
      return "/";
    }
    return rest.charAt(0) == '?' ? "/" + rest : rest;
  }

  private static int schemeEnd(String uri) {
    if (uri.regionMatches(true, 0, "http://", 0, 7)) {
      return 7;
    }
    if (uri.regionMatches(true, 0, "https://", 0, 8)) {
      return 8;
    }
    return -1;
  }

  private static String normalise(String authority, int defaultPort) {
    String a = authority.toLowerCase(Locale.ROOT);
    int colon = a.lastIndexOf(':');
    boolean hasPort = colon >= 0 && colon > a.lastIndexOf(']');
    if (!hasPort) {
      return a + ":" + defaultPort;
    }
    return colon == a.length() - 1 ? a + defaultPort : a;
  }
}
