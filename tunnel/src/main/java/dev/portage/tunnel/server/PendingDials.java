package dev.portage.tunnel.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Dials waiting for their DIAL_RSP, keyed by {@code random}. Removal is atomic, so exactly one of the
 * agent's answer, the frontend's DIAL_CLS, the timeout or the agent's loss wins. Thread-safe.
 */
final class PendingDials {
  private final Map<Long, PendingDial> byRandom = new ConcurrentHashMap<>();
  private final ServerMetrics metrics;

  PendingDials(ServerMetrics metrics) {
    this.metrics = metrics;
  }

  /** False when a dial with the same random is already pending. */
  boolean add(PendingDial d) {
    boolean added = byRandom.putIfAbsent(d.random, d) == null;
    metrics.pendingDials(byRandom.size());
    return added;
  }

  /** Removes the dial {@code random} if {@code backend} is where it was sent. */
  PendingDial remove(long random, Backend backend) {
    PendingDial d = byRandom.get(random);
    if (d == null || d.backend != backend || !byRandom.remove(random, d)) {
      return null;
    }
    metrics.pendingDials(byRandom.size());
    return d;
  }

  /** Removes the dial {@code random} if {@code frontend} owns it. */
  PendingDial remove(long random, Frontend frontend) {
    PendingDial d = byRandom.get(random);
    if (d == null || d.frontend != frontend || !byRandom.remove(random, d)) {
      return null;
    }
    metrics.pendingDials(byRandom.size());
    return d;
  }

  boolean remove(PendingDial d) {
    boolean removed = byRandom.remove(d.random, d);
    metrics.pendingDials(byRandom.size());
    return removed;
  }

  /** Removes and returns every dial sent to {@code backend}. */
  List<PendingDial> removeAll(Backend backend) {
    List<PendingDial> out = new ArrayList<>();
    for (PendingDial d : byRandom.values()) {
      if (d.backend == backend && byRandom.remove(d.random, d)) {
        out.add(d);
      }
    }
    metrics.pendingDials(byRandom.size());
    return out;
  }

  /** Dials sent to {@code backend} still waiting for their answer. */
  int countFor(Backend backend) {
    int n = 0;
    for (PendingDial d : byRandom.values()) {
      if (d.backend == backend) {
        n++;
      }
    }
    return n;
  }

  int size() {
    return byRandom.size();
  }
}
