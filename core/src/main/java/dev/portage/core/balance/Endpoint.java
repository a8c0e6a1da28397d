package dev.portage.core.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One place a balancer can send work to: an identity ({@link #id()}), the caller's {@link #target()}
 * (an address, a URL, a channel factory...), a weight, and the mutable state balancers read:
 * readiness, requests in flight and the latency estimate of peak-EWMA.
 *
 * <p>An endpoint is {@linkplain #isReady() ready}, and so may be picked, when three independent
 * conditions hold: it is {@linkplain #isHealthy() healthy} (health checks), {@linkplain
 * #isReachable() reachable} (its last connect did not fail; an {@link EndpointReconnector} brings it
 * back) and not shut by {@link FailureAccrual}. Each has its own writer, so none overrides another.
 *
 * <p>Identity is by object: {@link Balancer#update} keeps the existing object (and so its state) for
 * an endpoint whose id, target and weight are unchanged. Thread-safe; the conditions are bits of one
 * word, changed by CAS and read by pickers with a single volatile read.
 */
public final class Endpoint<T> {

  private static final int UNHEALTHY = 1;
  private static final int UNREACHABLE = 2;
  /** Failure accrual: shut, or in probation with its one probe in flight. */
  private static final int SHUT = 4;
  /** Failure accrual: ready for exactly one probe, claimed by the pick that takes it. */
  private static final int PROBATION = 8;
  private static final int NOT_READY = UNHEALTHY | UNREACHABLE | SHUT;
  private static final VarHandle GATE;

  static {
    try {
      GATE = MethodHandles.lookup().findVarHandle(Endpoint.class, "gate", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String id;
  private final T target;
  private final int weight;
  @SuppressWarnings("unused") // through GATE
  private volatile int gate;
  private final AtomicInteger inFlight = new AtomicInteger();
  // Written on completions only; picks read it without a lock (see PeakEwmaP2cBalancer).
  private final AtomicReference<RttEstimate> rtt = new AtomicReference<>();
  private final AtomicReference<Breaker> breaker = new AtomicReference<>(); // set once by FailureAccrual

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

  /** An endpoint of weight 1, ready, with no load. */
  public static <T> Endpoint<T> of(String id, T target) {
    return new Endpoint<>(id, target, 1);
  }

  /** An endpoint with the given weight ({@code >= 1}), ready, with no load. */
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

  /** Whether health checks pass (true unless {@link #setHealthy} said otherwise). */
  public boolean isHealthy() {
    return (gate & UNHEALTHY) == 0;
  }

  /** Marks the endpoint (un)healthy; balancers skip unhealthy endpoints from their next pick on. */
  public void setHealthy(boolean healthy) {
    change(UNHEALTHY, !healthy);
  }

  /** Whether the last connect to the endpoint did not fail (true until one does). */
  public boolean isReachable() {
    return (gate & UNREACHABLE) == 0;
  }

  /**
   * Marks whether the endpoint can be connected to; balancers skip unreachable endpoints. Becoming
   * reachable again drops the latency estimate: what it said was about the connection that failed,
   * and the endpoint starts over at the default RTT like a new one.
   *
   * @return whether this call changed the state
   */
  public boolean setReachable(boolean reachable) {
    boolean changed = change(UNREACHABLE, !reachable);
    if (changed && reachable) {
      rtt.set(null);
    }
    return changed;
  }

  /**
   * Whether balancers may pick the endpoint: healthy, reachable and not shut by failure accrual. An
   * endpoint in probation is ready until the one pick that takes it as a probe.
   */
  public boolean isReady() {
    return (gate & NOT_READY) == 0;
  }

  /** Whether failure accrual shut the endpoint (a probe in flight counts as shut). */
  public boolean isShut() {
    return (gate & SHUT) != 0;
  }

  /** Picks of this endpoint not completed yet (across every balancer that holds it). */
  public int inFlight() {
    return inFlight.get();
  }

  boolean inProbation() {
    return (gate & PROBATION) != 0;
  }

  /** Failure accrual's view of the gate: shut, probation (ready for one probe) or open. */
  void setAccrualState(boolean shut, boolean probation) {
    int bits = (shut ? SHUT : 0) | (probation ? PROBATION : 0);
    while (true) {
      int g = gate;
      int next = (g & ~(SHUT | PROBATION)) | bits;
      if (g == next || GATE.compareAndSet(this, g, next)) {
        return;
      }
    }
  }

  /** Claims the one probe of probation: PROBATION becomes SHUT for the probe's duration. */
  boolean claimProbe() {
    while (true) {
      int g = gate;
      if ((g & PROBATION) == 0) {
        return false;
      }
      if (GATE.compareAndSet(this, g, (g & ~PROBATION) | SHUT)) {
        return true;
      }
    }
  }

  /** The failure accrual breaker watching this endpoint, or null. */
  Breaker breaker() {
    return breaker.get();
  }

  /** Sets the breaker unless one is set; returns the one in place. */
  Breaker attachBreaker(Breaker b) {
    return breaker.compareAndSet(null, b) ? b : breaker.get();
  }

  private boolean change(int bit, boolean set) {
    while (true) {
      int g = gate;
      int next = set ? g | bit : g & ~bit;
      if (g == next) {
        return false;
      }
      if (GATE.compareAndSet(this, g, next)) {
        return true;
      }
    }
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
    return "Endpoint{id=" + id + ", target=" + target + ", weight=" + weight + ", healthy=" + isHealthy()
        + ", reachable=" + isReachable() + ", shut=" + isShut() + ", inFlight=" + inFlight.get() + '}';
  }
}
