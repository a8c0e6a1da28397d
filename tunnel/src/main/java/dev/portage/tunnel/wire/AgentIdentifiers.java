package dev.portage.tunnel.wire;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The identifiers an agent announces in the {@code agentidentifiers} request header, URL-query encoded
 * ({@code host=a&host=b&ipv4=1.2.3.4&ipv6=..&cidr=10.0.0.0/8&default-route=true}). A server ignores
 * unknown keys, as upstream's does; an agent refuses them in its own flag ({@link #parseStrict}), as
 * upstream's does. Immutable and thread-safe.
 *
 * @param hosts host names the agent serves ({@code destHost} strategy)
 * @param ipv4 IPv4 addresses the agent serves ({@code destHost})
 * @param ipv6 IPv6 addresses the agent serves ({@code destHost})
 * @param cidrs networks the agent serves (kept for status; no strategy uses them yet)
 * @param defaultRoute whether the agent serves the default route ({@code defaultRoute} strategy)
 */
public record AgentIdentifiers(
    List<String> hosts, List<String> ipv4, List<String> ipv6, List<String> cidrs, boolean defaultRoute) {

  private static final Set<String> TRUE = Set.of("1", "t", "T", "TRUE", "true", "True");
  private static final Set<String> FALSE = Set.of("0", "f", "F", "FALSE", "false", "False");

  /** No identifiers at all. */
  public static final AgentIdentifiers NONE =
      new AgentIdentifiers(List.of(), List.of(), List.of(), List.of(), false);

  public AgentIdentifiers {
    hosts = List.copyOf(hosts);
    ipv4 = List.copyOf(ipv4);
    ipv6 = List.copyOf(ipv6);
    cidrs = List.copyOf(cidrs);
  }

  /** The identifier types of the wire. */
  private static final Set<String> KEYS = Set.of("host", "ipv4", "ipv6", "cidr", "default-route");

  /**
   * Parses the header value as a server does: {@code null} or empty means {@link #NONE}, unknown keys
   * are ignored.
   *
   * @throws IllegalArgumentException for a malformed escape, a {@code ;} separator or a
   *     {@code default-route} value that is not a boolean
   */
  public static AgentIdentifiers parse(String query) {
    return parse(query, false);
  }

  /**
   * Parses an agent's own {@code --agent-identifiers} as upstream's agent checks it: as {@link
   * #parse}, and an unknown key is an error too ({@code unknown address type: <key>}).
   */
  public static AgentIdentifiers parseStrict(String query) {
    return parse(query, true);
  }

  private static AgentIdentifiers parse(String query, boolean strict) {
    if (query == null || query.isEmpty()) {
      return NONE;
    }
    if (query.indexOf(';') >= 0) {
      throw new IllegalArgumentException(
          "agentidentifiers: invalid ';' separator in \"" + query + "\" (expected: key=value pairs joined by '&')");
    }
    List<String> hosts = new ArrayList<>();
    List<String> ipv4 = new ArrayList<>();
    List<String> ipv6 = new ArrayList<>();
    List<String> cidrs = new ArrayList<>();
    boolean defaultRoute = false;
    for (String pair : query.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq < 0 ? pair : pair.substring(0, eq), query);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), query);
      if (strict && !KEYS.contains(key)) {
        throw new IllegalArgumentException("agentIdentifiers: unknown address type: " + key
            + " (expected: host, ipv4, ipv6, cidr or default-route)");
      }
      switch (key) {
        case "host" -> hosts.add(value);
        case "ipv4" -> ipv4.add(value);
        case "ipv6" -> ipv6.add(value);
        case "cidr" -> cidrs.add(value);
        case "default-route" -> {
          if (TRUE.contains(value)) {
            defaultRoute = true;
          } else if (!FALSE.contains(value)) {
            throw new IllegalArgumentException(
                "agentidentifiers: default-route=\"" + value + "\" (expected: true or false)");
          }
        }
        default -> {
          // Unknown identifier types are ignored so newer agents can talk to this server.
        }
      }
    }
    return new AgentIdentifiers(hosts, ipv4, ipv6, cidrs, defaultRoute);
  }

  /** True when {@code host} equals one of the host, IPv4 or IPv6 identifiers. */
  public boolean matchesHost(String host) {
    return hosts.contains(host) || ipv4.contains(host) || ipv6.contains(host);
  }

  /** Encodes in the header's URL-query form (what {@link #parse} reads back). */
  public String encode() {
    StringBuilder sb = new StringBuilder();
    hosts.forEach(v -> append(sb, "host", v));
    ipv4.forEach(v -> append(sb, "ipv4", v));
    ipv6.forEach(v -> append(sb, "ipv6", v));
    cidrs.forEach(v -> append(sb, "cidr", v));
    if (defaultRoute) {
      append(sb, "default-route", "true");
    }
    return sb.toString();
  }

  private static void append(StringBuilder sb, String key, String value) {
    if (!sb.isEmpty()) {
      sb.append('&');
    }
    sb.append(key).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
  }

  private static String decode(String s, String query) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "agentidentifiers: malformed escape in \"" + query + "\" (expected: URL-query encoding)", e);
    }
  }
}
