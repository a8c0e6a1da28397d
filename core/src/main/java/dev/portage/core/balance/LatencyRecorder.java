package dev.portage.core.balance;

/** Where a {@link Pick} reports the latency of a finished request; implemented by latency-aware balancers. */
interface LatencyRecorder {

  /**
   * Records that a request to {@code endpoint}, picked when the ticker read {@code pickedAtNanos},
   * took {@code rttNanos}. Thread-safe.
   */
  void record(Endpoint<?> endpoint, long rttNanos, long pickedAtNanos);

  /** The recorder's clock, used to time failures from the pick on. */
  long nanoTime();
}
