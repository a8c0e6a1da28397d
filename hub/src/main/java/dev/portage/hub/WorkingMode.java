package dev.portage.hub;

/**
 * YurtHub's {@code --working-mode}: what the hub does besides proxying.
 */
public enum WorkingMode {
  /** An edge node: answers are cached and served from the cache while the cloud is unreachable. */
  EDGE,
  /** A node in the cloud: the hub only proxies and balances; nothing is cached. */
  CLOUD,
  /**
   * YurtHub's mode for a node of a hosted control plane; here the hub proxies without a cache, as
   * in {@link #CLOUD} ({@code --host-control-plane-address} is required, as upstream, but has no
   * effect).
   */
  LOCAL;

  /**
   * The mode a flag value names.
   *
   * @throws IllegalArgumentException for anything but {@code edge}, {@code cloud} or {@code local}
   */
  public static WorkingMode parse(String value) {
    return switch (value) {
      case "edge" -> EDGE;
      case "cloud" -> CLOUD;
      case "local" -> LOCAL;
      default -> throw new IllegalArgumentException(
          "--working-mode: " + value + " (expected: edge, cloud or local)");
    };
  }

  /** Whether this mode caches answers and serves them while the cloud is unreachable. */
  public boolean caches() {
    return this == EDGE;
  }
}
