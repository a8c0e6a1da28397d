package dev.portage.bench.soak;

import dev.portage.core.time.Ticker;

/** Nanoseconds since the soak started, shared by every thread of the harness (immutable). */
record SoakClock(Ticker ticker, long startNanos) {

  static SoakClock start(Ticker ticker) {
    return new SoakClock(ticker, ticker.nanoTime());
  }

  long now() {
    return ticker.nanoTime() - startNanos;
  }

  /** A soak time as {@code m:ss}. */
  static String format(long nanos) {
    long s = nanos / 1_000_000_000L;
    return String.format("%d:%02d", s / 60, s % 60);
  }
}
