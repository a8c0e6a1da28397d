package dev.portage.core.balance;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;

/**
 * Power of two choices over peak-EWMA load (Finagle, Linkerd, tower).
 *
 * <ul>
 *   <li>Each endpoint holds a latency estimate, seeded with the default RTT the first time this
 *       balancer looks at it. A completed request's RTT above the estimate replaces it at once (a
 *       peak); a lower one is blended in: {@code estimate = estimate·w + rtt·(1−w)}, {@code w =
 *       exp(−elapsed/decay)}. Estimates are floored at 1 ms.
 *   <li>Reading the load decays the estimate toward 0 over the time since its last update, so a slow
 *       endpoint is tried again after a while: {@code cost = estimate·w × (in flight + 1)}.
 *   <li>A pick draws two distinct ready endpoints ({@code a = rand[0,n)}, {@code b = rand[0,n−1)},
 *       {@code b += 1 if b ≥ a}) and takes the cheaper, {@code a} on a tie; one ready endpoint is
 *       taken as is.
 *   <li>A failure (see {@link Pick#fail(long)}) is recorded as at least the failure penalty, when one
 *       is set: a fast error or 5xx must not make an endpoint look cheap (Linkerd's opt-in
 *       {@code penalize-failures}, 5 s there). The penalty decays like any other peak, so the
 *       endpoint is tried again after a while.
 * </ul>
 *
 * <p>Tower writes the decayed estimate back whenever it reads the load. Here picks stay write-free:
 * the decay composes exactly ({@code e·w1·w2 = e·exp(−(t1+t2)/decay)}), so the cost read is the
 * same, and a completion first applies the decay up to its own pick (the reading that chose the
 * endpoint) before comparing and blending, as tower would. So an endpoint that was slow, decayed while
 * avoided and answers fast again is taken back at its new speed. Completions write with a CAS on the
 * endpoint's immutable estimate.
 */
final class PeakEwmaP2cBalancer<T> extends SnapshotBalancer<T> implements LatencyRecorder {

  static final Duration DEFAULT_DECAY = Duration.ofSeconds(10);
  static final Duration DEFAULT_RTT = Duration.ofMillis(30);
  static final double FLOOR_NANOS = Duration.ofMillis(1).toNanos();

  private final Ticker ticker;
  private final RandomGenerator random;
  private final double decayNanos;
  private final double defaultRttNanos;
  private final long failurePenaltyNanos;

  PeakEwmaP2cBalancer(
      Ticker ticker, RandomGenerator random, Duration decay, Duration defaultRtt, Duration failurePenalty) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.random = Objects.requireNonNull(random, "random");
    Objects.requireNonNull(decay, "decay");
    Objects.requireNonNull(defaultRtt, "defaultRtt");
    if (decay.isNegative() || decay.isZero()) {
      throw new IllegalArgumentException("decay: " + decay + " (expected: > 0)");
    }
    if (defaultRtt.isNegative() || defaultRtt.isZero()) {
      throw new IllegalArgumentException("defaultRtt: " + defaultRtt + " (expected: > 0)");
    }
    Objects.requireNonNull(failurePenalty, "failurePenalty");
    if (failurePenalty.isNegative()) {
      throw new IllegalArgumentException("failurePenalty: " + failurePenalty + " (expected: >= 0)");
    }
    this.failurePenaltyNanos = failurePenalty.toNanos();
    this.decayNanos = decay.toNanos();
    this.defaultRttNanos = Math.max(FLOOR_NANOS, defaultRtt.toNanos());
  }

  @Override
  Pick<T> select(List<Endpoint<T>> snapshot) {
    int a = ReadySampler.readyIndex(snapshot, random, -1);
    if (a < 0) {
      return null;
    }
    long now = ticker.nanoTime();
    int b = ReadySampler.readyIndex(snapshot, random, a);
    Endpoint<T> chosen = snapshot.get(a);
    if (b >= 0) {
      Endpoint<T> other = snapshot.get(b);
      if (cost(other, now) < cost(chosen, now)) {
        chosen = other;
      }
    }
    return new Pick<>(chosen, this, now);
  }

  /** {@code decayed estimate × (in flight + 1)}, in nanoseconds. */
  double cost(Endpoint<?> endpoint, long now) {
    return estimate(endpoint, now).decayedAt(now, decayNanos) * (endpoint.inFlight() + 1);
  }

  /** As a pick would weigh it; an endpoint never looked at costs the default RTT (not seeded here). */
  @Override
  public double latencyEstimateNanos(Endpoint<T> endpoint) {
    RttEstimate current = endpoint.rtt().get();
    if (current == null) {
      return defaultRttNanos;
    }
    return current.decayedAt(ticker.nanoTime(), decayNanos);
  }

  @Override
  public void record(Endpoint<?> endpoint, long rttNanos, long pickedAtNanos, boolean failure) {
    if (failure) {
      rttNanos = Math.max(rttNanos, failurePenaltyNanos);
    }
    long now = ticker.nanoTime();
    AtomicReference<RttEstimate> ref = endpoint.rtt();
    while (true) {
      RttEstimate old = estimate(endpoint, now);
      RttEstimate next =
          old.asReadAt(pickedAtNanos, decayNanos).observe(rttNanos, now, decayNanos, FLOOR_NANOS);
      if (ref.compareAndSet(old, next)) {
        return;
      }
    }
  }

  @Override
  public long nanoTime() {
    return ticker.nanoTime();
  }

  /** The endpoint's estimate, seeded with the default RTT as of {@code now} if it has none yet. */
  private RttEstimate estimate(Endpoint<?> endpoint, long now) {
    AtomicReference<RttEstimate> ref = endpoint.rtt();
    RttEstimate current = ref.get();
    if (current != null) {
      return current;
    }
    RttEstimate seeded = new RttEstimate(defaultRttNanos, now);
    return ref.compareAndSet(null, seeded) ? seeded : ref.get();
  }
}
