package dev.portage.core.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The result of one {@link Balancer#pick()}: the chosen endpoint, counted as in flight until the
 * caller ends the pick. A pick tells the balancer two things, each at most once (later calls do
 * nothing): its <b>latency</b>, which ends it, and its <b>result</b> (success or failure), which
 * {@link FailureAccrual} counts.
 *
 * <ul>
 *   <li>{@code complete(rtt)}: a success that took {@code rtt} (dispatch to first response byte,
 *       connect time...). Ends the pick and records both.
 *   <li>{@code fail(rtt)} / {@code fail()}: a failure: a response classified as one (5xx, a gRPC
 *       error in trailers-only form) after {@code rtt}, or no response at all (connect error, reset)
 *       after the time since the pick. Peak-EWMA records at least its failure penalty, so a failure
 *       never looks fast; failure accrual counts it.
 *   <li>{@code responded(rtt)} then {@code result(success)}: for responses classified only at their
 *       end (gRPC status in trailers): the latency ends the pick at the response head, the result
 *       follows when the stream ends.
 *   <li>{@code cancel()}: the caller gave up for its own reasons (client went away, another attempt
 *       won); ends the pick and drops a result not yet given, since neither says anything about the
 *       endpoint.
 * </ul>
 *
 * Thread-safe: a pick may be ended from any thread.
 */
public final class Pick<T> {

  private static final int ENDED = 1;
  private static final int SETTLED = 2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Pick.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Endpoint<T> endpoint;
  private final LatencyRecorder recorder;
  private final long pickedAtNanos;
  private boolean probe; // written before the pick is handed out
  @SuppressWarnings("unused") // through STATE
  private volatile int state;

  /**
   * @param recorder where latency observations go, or null for balancers that only count in flight
   * @param pickedAtNanos ticker reading at the pick; used by {@link #fail()} when recording
   */
  Pick(Endpoint<T> endpoint, LatencyRecorder recorder, long pickedAtNanos) {
    this.endpoint = endpoint;
    this.recorder = recorder;
    this.pickedAtNanos = pickedAtNanos;
    endpoint.acquire();
  }

  /**
   * Lets the pick through failure accrual: an endpoint in probation takes exactly one probe. False
   * when another pick took it first (the caller then ends this pick and picks again).
   */
  boolean admit() {
    if (!endpoint.inProbation()) {
      return true;
    }
    if (!endpoint.claimProbe()) {
      return false;
    }
    probe = true;
    Breaker b = endpoint.breaker();
    if (b != null) {
      b.probeClaimed();
    }
    return true;
  }

  public Endpoint<T> endpoint() {
    return endpoint;
  }

  /** Shortcut for {@code endpoint().target()}. */
  public T target() {
    return endpoint.target();
  }

  /**
   * Ends the pick as a success that took {@code rttNanos} (as measured by the caller).
   *
   * @throws IllegalArgumentException if {@code rttNanos < 0}; the pick then stays open
   */
  public void complete(long rttNanos) {
    responded(rttNanos);
    result(true);
  }

  /**
   * Ends the pick with the latency of a response whose result is not known yet; give it with {@link
   * #result} when it is (or {@link #cancel()} if it never will be).
   *
   * @throws IllegalArgumentException if {@code rttNanos < 0}; the pick then stays open
   */
  public void responded(long rttNanos) {
    responded(rttNanos, false);
  }

  /**
   * As {@link #responded(long)}; with {@code penalize} peak-EWMA records at least its failure
   * penalty, for answers that say the endpoint is struggling whatever their final result (Linkerd
   * penalises a 429 or a gRPC RESOURCE_EXHAUSTED, which are not failures).
   */
  public void responded(long rttNanos, boolean penalize) {
    if (rttNanos < 0) {
      throw new IllegalArgumentException("rttNanos: " + rttNanos + " (expected: >= 0)");
    }
    if (end() && recorder != null) {
      recorder.record(endpoint, rttNanos, pickedAtNanos, penalize);
    }
  }

  /** Ends the pick as a failure without a response; records the time since the pick (at least the penalty). */
  public void fail() {
    fail(recorder == null ? 0 : Math.max(0, recorder.nanoTime() - pickedAtNanos));
  }

  /**
   * Ends the pick as a failure answered after {@code rttNanos}; peak-EWMA records at least its
   * failure penalty. A negative {@code rttNanos} counts as 0.
   */
  public void fail(long rttNanos) {
    if (end() && recorder != null) {
      recorder.record(endpoint, Math.max(0, rttNanos), pickedAtNanos, true);
    }
    result(false);
  }

  /** Gives the pick's result to failure accrual; does nothing after the first result or a cancel. */
  public void result(boolean success) {
    if (settle()) {
      Breaker b = endpoint.breaker();
      if (b != null) {
        b.onResult(success, probe);
      }
    }
  }

  /** Ends the pick without telling the balancer anything but that it is no longer in flight. */
  public void cancel() {
    end();
    if (settle() && probe) {
      Breaker b = endpoint.breaker();
      if (b != null) {
        b.onProbeAbandoned();
      }
    }
  }

  /** Whether the pick has been ended (its latency given, or cancelled). */
  public boolean isDone() {
    return (state & ENDED) != 0;
  }

  /** Whether this pick is failure accrual's one probe of an endpoint in probation. */
  public boolean isProbe() {
    return probe;
  }

  private boolean end() {
    if (setBit(ENDED)) {
      endpoint.release();
      return true;
    }
    return false;
  }

  private boolean settle() {
    return setBit(SETTLED);
  }

  private boolean setBit(int bit) {
    while (true) {
      int s = state;
      if ((s & bit) != 0) {
        return false;
      }
      if (STATE.compareAndSet(this, s, s | bit)) {
        return true;
      }
    }
  }

  @Override
  public String toString() {
    return "Pick{" + endpoint.id() + (isDone() ? ", done}" : "}");
  }
}
