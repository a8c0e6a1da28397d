package dev.portage.core.balance;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The result of one {@link Balancer#pick()}: the chosen endpoint, counted as in flight until the
 * caller ends the pick with exactly one of {@link #complete(long)}, {@link #fail()} or {@link
 * #cancel()}. Ending is idempotent: the first call counts, later ones do nothing.
 *
 * <p>What each ending tells a latency-aware balancer (peak-EWMA):
 *
 * <ul>
 *   <li>{@code complete(rtt)}: a success with the latency the caller measured (dispatch to first
 *       response byte, connect time...); recorded.
 *   <li>{@code fail()}: the endpoint answered with an error or the attempt failed; the time since the
 *       pick is recorded as an observation, as tower's peak-EWMA does, so an endpoint that fails
 *       slowly looks slow. A fast failure looks fast: removing endpoints that fail fast is the job of
 *       health checks and failure accrual, not of the latency estimate.
 *   <li>{@code cancel()}: the caller gave up for its own reasons (client went away, another attempt
 *       won); only the in-flight count is released, since the elapsed time says nothing about the
 *       endpoint.
 * </ul>
 *
 * Thread-safe: a pick may be ended from any thread.
 */
public final class Pick<T> {

  private static final VarHandle DONE;

  static {
    try {
      DONE = MethodHandles.lookup().findVarHandle(Pick.class, "done", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Endpoint<T> endpoint;
  private final LatencyRecorder recorder;
  private final long pickedAtNanos;
  @SuppressWarnings("unused") // through DONE
  private volatile int done;

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
    if (rttNanos < 0) {
      throw new IllegalArgumentException("rttNanos: " + rttNanos + " (expected: >= 0)");
    }
    if (end() && recorder != null) {
      recorder.record(endpoint, rttNanos, pickedAtNanos);
    }
  }

  /** Ends the pick as a failure; latency-aware balancers record the time since the pick. */
  public void fail() {
    if (end() && recorder != null) {
      recorder.record(endpoint, Math.max(0, recorder.nanoTime() - pickedAtNanos), pickedAtNanos);
    }
  }

  /** Ends the pick without telling the balancer anything but that it is no longer in flight. */
  public void cancel() {
    end();
  }

  /** Whether the pick has been ended. */
  public boolean isDone() {
    return done != 0;
  }

  private boolean end() {
    if (DONE.compareAndSet(this, 0, 1)) {
      endpoint.release();
      return true;
    }
    return false;
  }

  @Override
  public String toString() {
    return "Pick{" + endpoint.id() + (isDone() ? ", done}" : "}");
  }
}
