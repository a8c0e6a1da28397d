package dev.portage.bench.soak;

/**
 * One injected fault: from the kill (or stop) until the target was seen ready again plus a grace
 * period. Times are nanoseconds since the soak started. {@code recoveredNanos} is -1 while the
 * target has not come back (the window is then open-ended); {@code cutShort} says the soak ended
 * before it could.
 */
record FaultWindow(FaultKind kind, String target, long startNanos, long downNanos, long recoveredNanos,
    long graceNanos, boolean cutShort) {

  /** Whether an event at {@code t} on path {@code traffic} may be blamed on this fault. */
  boolean covers(Traffic traffic, long t) {
    if (!kind.affects.contains(traffic) || t < startNanos) {
      return false;
    }
    return recoveredNanos < 0 || t <= recoveredNanos + graceNanos;
  }
}
