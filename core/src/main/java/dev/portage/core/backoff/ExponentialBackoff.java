package dev.portage.core.backoff;

import java.util.random.RandomGenerator;

/** The delay sequence of a {@link BackoffPolicy}. Not thread-safe, like every {@link Backoff}. */
final class ExponentialBackoff implements Backoff {

  private final double minNanos;
  private final double maxNanos;
  private final double factor;
  private final double jitter;
  private final RandomGenerator random;
  private double baseNanos;
  private int attempts;

  ExponentialBackoff(BackoffPolicy policy, RandomGenerator random) {
    this.minNanos = policy.min().toNanos();
    this.maxNanos = policy.max().toNanos();
    this.factor = policy.factor();
    this.jitter = policy.jitter();
    this.random = random;
    this.baseNanos = minNanos;
  }

  @Override
  public long nextDelayNanos() {
    double base = baseNanos;
    // Grow by multiplication rather than pow(n) so the cap stops growth and nothing overflows.
    baseNanos = Math.min(maxNanos, base * factor);
    if (attempts < Integer.MAX_VALUE) {
      attempts++;
    }
    double delay = base + random.nextDouble() * jitter * base;
    return (long) Math.min(maxNanos, delay);
  }

  @Override
  public void reset() {
    baseNanos = minNanos;
    attempts = 0;
  }

  @Override
  public int attempts() {
    return attempts;
  }

  @Override
  public String toString() {
    return "ExponentialBackoff{attempts=" + attempts + ", nextBaseNanos=" + (long) baseNanos + '}';
  }
}
