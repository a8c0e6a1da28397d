package dev.portage.core.backoff;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Settings of exponential backoff with jitter and a cap. Attempt {@code n} (from 0) waits {@code base
 * + U[0,1)·jitter·base}, capped at {@code max}, where {@code base = min·factor^n} capped at {@code
 * max}. Immutable; each {@link #newBackoff} is an independent sequence.
 *
 * <table>
 *   <caption>Presets</caption>
 *   <tr><th>constant</th><th>min</th><th>factor</th><th>jitter</th><th>max</th></tr>
 *   <tr><td>{@link #LINKERD}</td><td>100 ms</td><td>2</td><td>0.1</td><td>60 s</td></tr>
 *   <tr><td>{@link #KONNECTIVITY_SYNC}</td><td>1 s</td><td>1.5</td><td>0.1</td><td>10 s</td></tr>
 *   <tr><td>{@link #GRPC}</td><td>1 s</td><td>1.6</td><td>0.2</td><td>120 s</td></tr>
 * </table>
 *
 * @param min first delay before jitter ({@code > 0})
 * @param max cap on every delay, jitter included ({@code >= min})
 * @param factor growth per attempt ({@code >= 1})
 * @param jitter extra random share of the base delay ({@code 0..1})
 */
public record BackoffPolicy(Duration min, Duration max, double factor, double jitter) {

  /** Linkerd's reconnect backoff: 100 ms doubling to 60 s, 10 % jitter. */
  public static final BackoffPolicy LINKERD =
      new BackoffPolicy(Duration.ofMillis(100), Duration.ofSeconds(60), 2.0, 0.1);

  /** The Konnectivity agent's sync loop: 1 s growing ×1.5 to 10 s, 10 % jitter. */
  public static final BackoffPolicy KONNECTIVITY_SYNC =
      new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(10), 1.5, 0.1);

  /** grpc-java's reconnect backoff: 1 s growing ×1.6 to 120 s, 20 % jitter. */
  public static final BackoffPolicy GRPC =
      new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(120), 1.6, 0.2);

  public BackoffPolicy {
    Objects.requireNonNull(min, "min");
    Objects.requireNonNull(max, "max");
    if (min.isNegative() || min.isZero()) {
      throw new IllegalArgumentException("min: " + min + " (expected: > 0)");
    }
    if (max.compareTo(min) < 0) {
      throw new IllegalArgumentException("max: " + max + " (expected: >= min " + min + ")");
    }
    if (!(factor >= 1.0) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException("factor: " + factor + " (expected: >= 1 and finite)");
    }
    if (!(jitter >= 0.0 && jitter <= 1.0)) {
      throw new IllegalArgumentException("jitter: " + jitter + " (expected: 0..1)");
    }
  }

  /**
   * A fresh sequence starting at {@link #min()}.
   *
   * @param random source of the jitter; only the returned backoff's thread uses it
   */
  public Backoff newBackoff(RandomGenerator random) {
    return new ExponentialBackoff(this, Objects.requireNonNull(random, "random"));
  }
}
