package dev.portage.tunnel.server;

import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.Pick;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import io.netty.channel.EventLoop;

/**
 * The live agent streams and how each {@link ProxyStrategy} picks among them. Updates happen under a
 * lock and swap an immutable list; picks read the current list without locking (grpc-java's picker
 * pattern). A draining stream is picked only when its strategy has nothing else. Thread-safe.
 *
 * <p>{@code default} and {@code defaultRoute} choose with core's {@link Balancer#random random
 * balancer}, whose endpoint set is replaced on every change (agent added, removed or draining).
 * {@code destHost} depends on each dial's host, so it has no standing set to balance over: it picks
 * uniformly among that dial's matching agents directly.
 */
final class BackendRegistry {
  private final List<ProxyStrategy> strategies;
  private final ServerMetrics metrics;
  private final Object lock = new Object();
  private final Map<ProxyStrategy, Balancer<Backend>> balancers = new EnumMap<>(ProxyStrategy.class);
  private volatile List<Backend> backends = List.of();

  BackendRegistry(List<ProxyStrategy> strategies, ServerMetrics metrics) {
    this.strategies = List.copyOf(strategies);
    this.metrics = metrics;
    for (ProxyStrategy s : this.strategies) {
      if (s != ProxyStrategy.DEST_HOST) {
        balancers.put(s, Balancer.random(ThreadLocalRandom.current()));
      }
    }
    refresh();
  }

  void add(Backend b) {
    synchronized (lock) {
      List<Backend> next = new ArrayList<>(backends);
      next.add(b);
      backends = List.copyOf(next);
    }
    refresh();
  }

  void remove(Backend b) {
    synchronized (lock) {
      List<Backend> next = new ArrayList<>(backends);
      next.remove(b);
      backends = List.copyOf(next);
    }
    refresh();
  }

  /** Agent streams currently registered, in connection order. */
  List<Backend> all() {
    return backends;
  }

  /** The first strategy (in configured order) that has a candidate decides; null when none has one. */
  Backend pick(String host) {
    for (ProxyStrategy s : strategies) {
      Backend b = s == ProxyStrategy.DEST_HOST ? pickForHost(host) : pick(balancers.get(s));
      if (b != null) {
        return b;
      }
    }
    return null;
  }

  private Backend pickForHost(String host) {
    List<Backend> candidates = candidates(backends, ProxyStrategy.DEST_HOST, host);
    return candidates.isEmpty() ? null : candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
  }

  /**
   * A random balancer's choice. The pick is ended at once: a tunnel is not a request whose outcome or
   * latency says anything about the agent, and random choice does not look at load.
   */
  private static Backend pick(Balancer<Backend> balancer) {
    Pick<Backend> p = balancer.pick();
    if (p == null) {
      return null;
    }
    p.cancel();
    return p.target();
  }

  /**
   * The event loop of a connected, non-draining agent stream (random among several), where a new
   * frontend should live: with one agent, every tunnel shares its stream's thread. Null when no stream
   * runs on the server's own loops.
   */
  EventLoop preferredLoop() {
    List<Backend> snapshot = backends;
    int n = snapshot.size();
    if (n == 0) {
      return null;
    }
    int start = n == 1 ? 0 : ThreadLocalRandom.current().nextInt(n);
    for (int i = 0; i < n; i++) {
      Backend b = snapshot.get((start + i) % n);
      if (b.eventLoop() != null && !b.draining() && !b.closed()) {
        return b.eventLoop();
      }
    }
    return null;
  }

  /** Readiness follows the first strategy, as upstream's does. */
  boolean ready() {
    return !candidates(backends, strategies.get(0), null).isEmpty();
  }

  /**
   * Recomputes each strategy's candidates after a change (an agent added, removed or draining): the
   * balancers' endpoint sets and the ready-backends gauges. Under the lock, so the last change wins.
   */
  void refresh() {
    synchronized (lock) {
      List<Backend> snapshot = backends;
      for (Map.Entry<ProxyStrategy, Balancer<Backend>> e : balancers.entrySet()) {
        List<Endpoint<Backend>> endpoints = new ArrayList<>();
        for (Backend b : candidates(snapshot, e.getKey(), null)) {
          endpoints.add(Endpoint.of(b.agentId(), b));
        }
        e.getValue().update(endpoints);
      }
      for (ProxyStrategy s : ProxyStrategy.values()) {
        metrics.readyBackends(s, candidates(snapshot, s, null).size());
      }
      metrics.readyBackendConnections(snapshot.size());
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
