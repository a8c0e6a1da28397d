package dev.portage.core.ratelimit;

import dev.portage.core.time.Ticker;
import java.util.concurrent.locks.LockSupport;

/**
 * How {@link TokenBucket#acquire} waits. Production parks the calling thread; tests inject one that
 * advances a fake clock instead, so no test ever sleeps.
 */
@FunctionalInterface
interface Sleeper {

  /** Blocks for {@code nanos} nanoseconds (returns at once if {@code nanos <= 0}). */
  void sleepNanos(long nanos) throws InterruptedException;

  /** Parks until {@code ticker} has moved {@code nanos} on, surviving spurious wake-ups. */
  static Sleeper parking(Ticker ticker) {
    return nanos -> {
      long deadline = TokenBucket.saturatedAdd(ticker.nanoTime(), nanos);
      for (long left = nanos; left > 0; left = deadline - ticker.nanoTime()) {
        LockSupport.parkNanos(left);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
    };
  }
}
