package dev.portage.core.balance;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Chooses one endpoint per request or connection out of a changing set. {@link #update} replaces the
 * set by swapping an immutable snapshot; {@link #pick()} reads the current snapshot without a lock and
 * only returns a {@linkplain Endpoint#isReady() ready} endpoint (healthy, reachable, not shut by
 * failure accrual). Implementations come from the static factories and are
 * thread-safe: picks, completions and updates may run on any threads at once.
 *
 * <table>
 *   <caption>Implementations</caption>
 *   <tr><th>factory</th><th>chooses</th></tr>
 *   <tr><td>{@link #roundRobin()}</td><td>the next healthy endpoint after the last pick</td></tr>
 *   <tr><td>{@link #priority()}</td><td>the first healthy endpoint in update order</td></tr>
 *   <tr><td>{@link #random}</td><td>a uniformly random healthy endpoint</td></tr>
 *   <tr><td>{@link #weightedRoundRobin()}</td><td>smooth weighted round robin (nginx)</td></tr>
 *   <tr><td>{@link #peakEwmaP2c}</td><td>the cheaper of two random healthy endpoints, cost = peak-EWMA
 *       latency × (in flight + 1)</td></tr>
 * </table>
 */
public interface Balancer<T> {

  /**
   * Replaces the endpoint set, in the given order (priority uses it). An endpoint whose id, target and
   * weight match one already held keeps the held object and its state (readiness, in flight, latency);
   * new or changed endpoints are used as given, with their own fresh state.
   *
   * @throws IllegalArgumentException if two endpoints share an id
   * @throws NullPointerException if the collection or an element is null
   */
  void update(Collection<Endpoint<T>> endpoints);

  /**
   * Chooses an endpoint and counts it in flight until the returned pick is ended.
   *
   * @return the pick, or {@code null} when the set is empty or no endpoint is ready: a clear result
   *     the caller turns into its own answer (fall back, 503, wait), not an exception from deep inside
   */
  Pick<T> pick();

  /** The current endpoint set, in update order; an immutable snapshot for metrics and dashboards. */
  List<Endpoint<T>> endpoints();

  /**
   * The latency estimate this balancer holds for {@code endpoint} as of now, in nanoseconds, for
   * metrics: peak-EWMA's estimate decayed to now (the default RTT before its first observation).
   * Reading it changes no state.
   *
   * @return the estimate, or {@code NaN} for balancers that do not estimate latency
   */
  default double latencyEstimateNanos(Endpoint<T> endpoint) {
    return Double.NaN;
  }

  /**
   * The cost a load-weighing balancer assigns {@code endpoint} now, in nanoseconds (lower is
   * preferred): the latency estimate times in-flight requests + 1, as peak-EWMA P2C compares them;
   * {@code NaN} for balancers that do not estimate latency. Reads only. Thread-safe.
   */
  default double costNanos(Endpoint<T> endpoint) {
    return latencyEstimateNanos(endpoint) * (endpoint.inFlight() + 1);
  }

  /** Round robin over ready endpoints; resumes after the last pick. Lock-free. */
  static <T> Balancer<T> roundRobin() {
    return new RoundRobinBalancer<>();
  }

  /** The first ready endpoint in the order of the last {@link #update}. Lock-free. */
  static <T> Balancer<T> priority() {
    return new PriorityBalancer<>();
  }

  /**
   * A uniformly random ready endpoint.
   *
   * @param random must be thread-safe if picks run on several threads ({@code
   *     ThreadLocalRandom.current()} in production, a seeded {@code java.util.Random} in tests)
   */
  static <T> Balancer<T> random(RandomGenerator random) {
    return new RandomBalancer<>(random);
  }

  /**
   * Smooth weighted round robin as nginx does it: weights 5, 1, 1 give {@code a a b a c a a}. Picks
   * take a short lock.
   */
  static <T> Balancer<T> weightedRoundRobin() {
    return new WeightedRoundRobinBalancer<>();
  }

  /**
   * Power of two choices over peak-EWMA latency with the defaults of Linkerd/tower: decay 10 s, default
   * RTT 30 ms (estimates are floored at 1 ms).
   *
   * @param ticker the only clock the balancer reads
   * @param random must be thread-safe if picks run on several threads
   */
  static <T> Balancer<T> peakEwmaP2c(Ticker ticker, RandomGenerator random) {
    return new PeakEwmaP2cBalancer<>(
        ticker, random, PeakEwmaP2cBalancer.DEFAULT_DECAY, PeakEwmaP2cBalancer.DEFAULT_RTT, Duration.ZERO);
  }

  /**
   * Power of two choices over peak-EWMA latency.
   *
   * @param decay time constant of the moving average and of the decay toward 0 when idle ({@code > 0})
   * @param defaultRtt estimate of an endpoint before its first observation ({@code > 0}; floored at
   *     1 ms)
   */
  static <T> Balancer<T> peakEwmaP2c(
      Ticker ticker, RandomGenerator random, Duration decay, Duration defaultRtt) {
    return new PeakEwmaP2cBalancer<>(ticker, random, decay, defaultRtt, Duration.ZERO);
  }

  /**
   * Power of two choices over peak-EWMA latency where a failure ({@link Pick#fail}) counts as at
   * least {@code failurePenalty}, so endpoints that fail fast do not attract traffic.
   *
   * @param failurePenalty least latency a failure is recorded as ({@code >= 0}; 0 records failures
   *     at their observed time, as tower does)
   */
  static <T> Balancer<T> peakEwmaP2c(
      Ticker ticker, RandomGenerator random, Duration decay, Duration defaultRtt, Duration failurePenalty) {
    return new PeakEwmaP2cBalancer<>(ticker, random, decay, defaultRtt, failurePenalty);
  }
}
