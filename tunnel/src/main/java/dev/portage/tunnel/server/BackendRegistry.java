package dev.portage.tunnel.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The live agent streams and how each {@link ProxyStrategy} picks among them. Updates happen under a
 * lock and swap an immutable list; picks read the current list without locking (grpc-java's picker
 * pattern). A draining stream is picked only when its strategy has nothing else. Thread-safe.
 */
final class BackendRegistry {
  private final List<ProxyStrategy> strategies;
  private final ServerMetrics metrics;
  private final Object lock = new Object();
  private volatile List<Backend> backends = List.of();

  BackendRegistry(List<ProxyStrategy> strategies, ServerMetrics metrics) {
    this.strategies = List.copyOf(strategies);
    this.metrics = metrics;
    refreshGauges();
  }

  void add(Backend b) {
    synchronized (lock) {
      List<Backend> next = new ArrayList<>(backends);
      next.add(b);
      backends = List.copyOf(next);
    }
    refreshGauges();
  }

  void remove(Backend b) {
    synchronized (lock) {
      List<Backend> next = new ArrayList<>(backends);
      next.remove(b);
      backends = List.copyOf(next);
    }
    refreshGauges();
  }

  /** Agent streams currently registered, in connection order. */
  List<Backend> all() {
    return backends;
  }

  /** The first strategy (in configured order) that has a candidate decides; null when none has one. */
  Backend pick(String host) {
    List<Backend> snapshot = backends;
    for (ProxyStrategy s : strategies) {
      List<Backend> candidates = candidates(snapshot, s, host);
      if (!candidates.isEmpty()) {
        return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
      }
    }
    return null;
  }

  /** Readiness follows the first strategy, as upstream's does. */
  boolean ready() {
    return !candidates(backends, strategies.get(0), null).isEmpty();
  }

  void refreshGauges() {
    List<Backend> snapshot = backends;
    for (ProxyStrategy s : ProxyStrategy.values()) {
      metrics.readyBackends(s, candidates(snapshot, s, null).size());
    }
  }

  /**
   * One stream per agent ID (its first non-draining one, else its first); then only non-draining ones
   * if any exist. A null host matches any agent with a host identifier (used for readiness).
   */
  private static List<Backend> candidates(List<Backend> snapshot, ProxyStrategy s, String host) {
    Map<String, Backend> perAgent = new LinkedHashMap<>();
    for (Backend b : snapshot) {
      if (b.closed() || !eligible(b, s, host)) {
        continue;
      }
      Backend current = perAgent.get(b.agentId());
      if (current == null || (current.draining() && !b.draining())) {
        perAgent.put(b.agentId(), b);
      }
    }
    List<Backend> all = new ArrayList<>(perAgent.values());
    List<Backend> active = all.stream().filter(b -> !b.draining()).toList();
    return active.isEmpty() ? all : active;
  }

  private static boolean eligible(Backend b, ProxyStrategy s, String host) {
    return switch (s) {
      case DEFAULT -> true;
      case DEFAULT_ROUTE -> b.identifiers().defaultRoute();
      case DEST_HOST -> host == null
          ? !(b.identifiers().hosts().isEmpty() && b.identifiers().ipv4().isEmpty() && b.identifiers().ipv6().isEmpty())
          : b.identifiers().matchesHost(host);
    };
  }
}
