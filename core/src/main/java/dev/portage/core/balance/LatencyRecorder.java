package dev.portage.core.balance;

/** Where a {@link Pick} reports the latency of a finished request; implemented by latency-aware balancers. */
interface LatencyRecorder {

  /**
   * Records that a request to {@code endpoint}, picked when the ticker read {@code pickedAtNanos},
   * took {@code rttNanos}; {@code failure} when it failed (a recorder may then charge more than the
   * observed time). Thread-safe.
   */
  void record(Endpoint<?> endpoint, long rttNanos, long pickedAtNanos, boolean failure);

  /** The recorder's clock, used to time failures from the pick on. */
  long nanoTime();
}
