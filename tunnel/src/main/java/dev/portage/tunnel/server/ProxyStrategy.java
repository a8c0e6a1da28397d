package dev.portage.tunnel.server;

import java.util.ArrayList;
import java.util.List;

/**
 * How the server picks an agent for a dial ({@code --proxy-strategies}, tried in order). Immutable.
 */
public enum ProxyStrategy {
  /** A random agent; that agent's first stream. */
  DEFAULT("default"),
  /** The agent whose {@code host}/{@code ipv4}/{@code ipv6} identifier equals the dial host. */
  DEST_HOST("destHost"),
  /** A random agent that announced {@code default-route=true}. */
  DEFAULT_ROUTE("defaultRoute");

  private final String flagName;

  ProxyStrategy(String flagName) {
    this.flagName = flagName;
  }

  /** The name used by {@code --proxy-strategies} and the {@code proxy_strategy} metric label. */
  public String flagName() {
    return flagName;
  }

  /** Parses one name as upstream spells it. */
  public static ProxyStrategy of(String name) {
    for (ProxyStrategy s : values()) {
      if (s.flagName.equals(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "proxy strategy: \"" + name + "\" (expected: default, destHost or defaultRoute)");
  }

  /** Parses a comma list such as {@code destHost,default}; blanks are skipped, duplicates rejected. */
  public static List<ProxyStrategy> parseList(String commaList) {
    List<ProxyStrategy> out = new ArrayList<>();
    for (String part : commaList.split(",")) {
      String name = part.trim();
      if (name.isEmpty()) {
        continue;
      }
      ProxyStrategy s = of(name);
      if (out.contains(s)) {
        throw new IllegalArgumentException("proxy strategies: \"" + commaList + "\" lists " + name + " twice");
      }
      out.add(s);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("proxy strategies: \"" + commaList + "\" (expected: at least one strategy)");
    }
    return List.copyOf(out);
  }
}
