package dev.portage.core.balance;

/**
 * Peak-EWMA state of one endpoint: the latency estimate as of {@code updatedAtNanos}. Immutable, so a
 * picker reads estimate and timestamp as one consistent pair.
 */
record RttEstimate(double estimateNanos, long updatedAtNanos) {

  /** The estimate decayed toward 0 over the time since the last update ({@code r = 0} in the EWMA). */
  double decayedAt(long nowNanos, double decayNanos) {
    long elapsed = nowNanos - updatedAtNanos;
    if (elapsed <= 0) {
      return estimateNanos;
    }
    return estimateNanos * Math.exp(-elapsed / decayNanos);
  }

  /**
   * This estimate as a reader at {@code readAtNanos} saw it: decayed and re-stamped, as tower writes
   * it back when it reads the load. Unchanged if it was updated after that reading.
   */
  RttEstimate asReadAt(long readAtNanos, double decayNanos) {
    if (readAtNanos <= updatedAtNanos) {
      return this;
    }
    return new RttEstimate(decayedAt(readAtNanos, decayNanos), readAtNanos);
  }

  /**
   * The estimate after observing {@code rttNanos} at {@code nowNanos}: a peak is taken at once,
   * anything lower is blended in with weight {@code 1 - exp(-elapsed / decay)}.
   */
  RttEstimate observe(double rttNanos, long nowNanos, double decayNanos, double floorNanos) {
    double next;
    if (rttNanos > estimateNanos) {
      next = rttNanos;
    } else {
      long elapsed = Math.max(0, nowNanos - updatedAtNanos);
      double w = Math.exp(-elapsed / decayNanos);
      next = estimateNanos * w + rttNanos * (1 - w);
    }
    return new RttEstimate(Math.max(floorNanos, next), nowNanos);
  }
}
