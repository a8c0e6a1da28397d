package dev.portage.core.balance;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One place a balancer can send work to: an identity ({@link #id()}), the caller's {@link #target()}
 * (an address, a URL, a channel factory...), a weight, and the mutable state balancers read: health,
 * requests in flight and the latency estimate of peak-EWMA.
 *
 * <p>Identity is by object: {@link Balancer#update} keeps the existing object (and so its state) for
 * an endpoint whose id, target and weight are unchanged. Thread-safe; health is written by one
 * prober or caller at a time and read lock-free by pickers.
 */
public final class Endpoint<T> {

  private final String id;
  private final T target;
  private final int weight;
  private volatile boolean healthy = true;
  private final AtomicInteger inFlight = new AtomicInteger();
  // Written on completions only; picks read it without a lock (see PeakEwmaP2cBalancer).
  private final AtomicReference<RttEstimate> rtt = new AtomicReference<>();

  private Endpoint(String id, T target, int weight) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(target, "target");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("id: \"\" (expected: non-empty)");
    }
    if (weight < 1) {
      throw new IllegalArgumentException("weight: " + weight + " (expected: >= 1)");
    }
    this.id = id;
    this.target = target;
    this.weight = weight;
  }

  /** An endpoint of weight 1, healthy, with no load. */
  public static <T> Endpoint<T> of(String id, T target) {
    return new Endpoint<>(id, target, 1);
  }

  /** An endpoint with the given weight ({@code >= 1}), healthy, with no load. */
  public static <T> Endpoint<T> of(String id, T target, int weight) {
    return new Endpoint<>(id, target, weight);
  }

  /** The identity balancers match on when the endpoint set is updated. */
  public String id() {
    return id;
  }

  /** The caller's object this endpoint stands for. */
  public T target() {
    return target;
  }

  /** Relative share for weighted balancers; {@code >= 1}. */
  public int weight() {
    return weight;
  }

  public boolean isHealthy() {
    return healthy;
  }

  /** Marks the endpoint (un)healthy; balancers skip unhealthy endpoints from their next pick on. */
  public void setHealthy(boolean healthy) {
    this.healthy = healthy;
  }

  /** Picks of this endpoint not completed yet (across every balancer that holds it). */
  public int inFlight() {
    return inFlight.get();
  }

  /** Whether {@code other} describes the same endpoint, so its state may be kept on an update. */
  boolean sameAs(Endpoint<?> other) {
    return id.equals(other.id) && target.equals(other.target) && weight == other.weight;
  }

  void acquire() {
    inFlight.incrementAndGet();
  }

  void release() {
    inFlight.decrementAndGet();
  }

  AtomicReference<RttEstimate> rtt() {
    return rtt;
  }

  @Override
  public String toString() {
    return "Endpoint{id=" + id + ", target=" + target + ", weight=" + weight + ", healthy=" + healthy
        + ", inFlight=" + inFlight.get() + '}';
  }
}
