package dev.portage.core.balance;

import dev.portage.core.backoff.BackoffPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * Consecutive-failure accrual, Linkerd's {@code failure-accrual: consecutive}: a circuit breaker per
 * endpoint that takes an endpoint out of balancing after a run of failed responses and lets one probe
 * through once a backoff has passed.
 *
 * <ul>
 *   <li><b>open</b>: consecutive failures are counted, a success resets the count; at {@code
 *       maxFailures} the endpoint is <b>shut</b>.
 *   <li><b>shut</b> for a backoff ({@code minPenalty·2^n} plus up to {@code jitterRatio} of it, at
 *       most {@code maxPenalty}); results of requests sent before are ignored.
 *   <li><b>probation</b>: the endpoint is ready again for exactly one request, the probe; its success
 *       opens the breaker (count and backoff start over), its failure shuts it with the next, doubled,
 *       backoff. A probe that ends without a result (cancelled) leaves the endpoint in probation.
 * </ul>
 *
 * Results come from {@link Pick#complete}, {@link Pick#fail()} and {@link Pick#result}. Balancers read
 * the state through {@link Endpoint#isReady()}; {@code onProbation} hears when an endpoint becomes
 * ready again (probation or open), so callers waiting for a ready endpoint can look again. Thread-safe;
 * backoff timers run on the injected scheduler.
 */
public final class FailureAccrual implements AutoCloseable {

  /**
   * Settings of consecutive-failure accrual, named as Linkerd's Service annotations {@code
   * balancer.linkerd.io/failure-accrual-consecutive-*}.
   *
   * @param maxFailures consecutive failures that shut an endpoint ({@code >= 1}; Linkerd 7)
   * @param minPenalty first backoff ({@code > 0}; Linkerd 1 s)
   * @param maxPenalty cap on every backoff ({@code >= minPenalty}; Linkerd 1 min)
   * @param jitterRatio random extra share of each backoff ({@code 0..1}; Linkerd 0.5)
   */
  public record Settings(int maxFailures, Duration minPenalty, Duration maxPenalty, double jitterRatio) {

    /** Linkerd's defaults: 7 failures, 1 s to 1 min, jitter 0.5. */
    public static final Settings LINKERD =
        new Settings(7, Duration.ofSeconds(1), Duration.ofMinutes(1), 0.5);

    public Settings {
      if (maxFailures < 1) {
        throw new IllegalArgumentException("maxFailures: " + maxFailures + " (expected: >= 1)");
      }
      Objects.requireNonNull(minPenalty, "minPenalty");
      Objects.requireNonNull(maxPenalty, "maxPenalty");
      if (minPenalty.isNegative() || minPenalty.isZero()) {
        throw new IllegalArgumentException("minPenalty: " + minPenalty + " (expected: > 0)");
      }
      if (maxPenalty.compareTo(minPenalty) < 0) {
        throw new IllegalArgumentException(
            "maxPenalty: " + maxPenalty + " (expected: >= minPenalty " + minPenalty + ")");
      }
      if (!(jitterRatio >= 0 && jitterRatio <= 1)) {
        throw new IllegalArgumentException("jitterRatio: " + jitterRatio + " (expected: 0..1)");
      }
    }

    BackoffPolicy backoff() {
      return new BackoffPolicy(minPenalty, maxPenalty, 2.0, jitterRatio);
    }
  }

  private final Settings settings;
  private final BackoffPolicy backoff;
  private final ScheduledExecutorService scheduler;
  private final RandomGenerator random;
  private final Consumer<Endpoint<?>> onReady;
  private final Set<Breaker> timed = ConcurrentHashMap.newKeySet(); // breakers with a pending timer
  private volatile boolean closed;

  /**
   * @param random jitter source; must be thread-safe
   * @param onReady told (outside any lock, on the scheduler or a caller's thread) when a watched
   *     endpoint is ready again after being shut
   */
  public FailureAccrual(
      Settings settings, ScheduledExecutorService scheduler, RandomGenerator random,
      Consumer<Endpoint<?>> onReady) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.backoff = settings.backoff();
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.random = Objects.requireNonNull(random, "random");
    this.onReady = Objects.requireNonNull(onReady, "onReady");
  }

  public Settings settings() {
    return settings;
  }

  /** Counts the results of {@code endpoint}'s picks from now on; a no-op if it is watched already. */
  public void watch(Endpoint<?> endpoint) {
    if (endpoint.breaker() == null) {
      endpoint.attachBreaker(new Breaker(this, endpoint, settings.maxFailures(), backoff.newBackoff(random)));
    }
  }

  /** Cancels pending backoff timers; endpoints stay in the state they are in. Idempotent. */
  @Override
  public void close() {
    closed = true;
    for (Breaker b : timed) {
      b.cancelTimer();
    }
    timed.clear();
  }

  /** Breakers waiting for their backoff to end (for tests and leak checks). */
  int pendingTimers() {
    return timed.size();
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  boolean isClosed() {
    return closed;
  }

  void timerStarted(Breaker b) {
    timed.add(b);
  }

  void timerEnded(Breaker b) {
    timed.remove(b);
  }

  void ready(Endpoint<?> endpoint) {
    onReady.accept(endpoint);
  }
}
