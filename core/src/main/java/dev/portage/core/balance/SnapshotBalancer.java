package dev.portage.core.balance;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The part every balancer shares: the endpoint set as an immutable list swapped atomically on update
 * (updates serialise on a lock; picks only read the volatile field), the rule that unchanged
 * endpoints keep their state, and failure accrual's probation (an endpoint in probation is taken by
 * exactly one pick; a pick that loses that race picks again).
 */
abstract class SnapshotBalancer<T> implements Balancer<T> {

  /** Picks tried when the chosen endpoint's probation probe was taken by another pick meanwhile. */
  private static final int ADMIT_ATTEMPTS = 4;

  private final Object updateLock = new Object();
  private volatile List<Endpoint<T>> snapshot = List.of();

  @Override
  public final void update(Collection<Endpoint<T>> endpoints) {
    Objects.requireNonNull(endpoints, "endpoints");
    synchronized (updateLock) {
      Map<String, Endpoint<T>> held = new HashMap<>();
      for (Endpoint<T> e : snapshot) {
        held.put(e.id(), e);
      }
      Map<String, Endpoint<T>> seen = new HashMap<>();
      List<Endpoint<T>> next = new ArrayList<>(endpoints.size());
      for (Endpoint<T> given : endpoints) {
        Objects.requireNonNull(given, "endpoints contains null");
        if (seen.put(given.id(), given) != null) {
          throw new IllegalArgumentException("duplicate endpoint id: " + given.id());
        }
        Endpoint<T> old = held.get(given.id());
        next.add(old != null && old.sameAs(given) ? old : given);
      }
      snapshot = List.copyOf(next);
    }
  }

  @Override
  public final Pick<T> pick() {
    List<Endpoint<T>> current = snapshot;
    if (current.isEmpty()) {
      return null;
    }
    for (int attempt = 0; attempt < ADMIT_ATTEMPTS; attempt++) {
      Pick<T> p = select(current);
      if (p == null || p.admit()) {
        return p;
      }
      p.cancel();
    }
    return null;
  }

  @Override
  public final List<Endpoint<T>> endpoints() {
    return snapshot;
  }

  /** Chooses a ready endpoint of the non-empty {@code snapshot} and opens a pick, or returns null. */
  abstract Pick<T> select(List<Endpoint<T>> snapshot);

  /** A pick for balancers that do not record latency: it only counts in flight. */
  static <T> Pick<T> countingPick(Endpoint<T> endpoint) {
    return endpoint == null ? null : new Pick<>(endpoint, null, 0);
  }
}
