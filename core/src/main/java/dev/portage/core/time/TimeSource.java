package dev.portage.core.time;

import java.time.InstantSource;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The three faces of time a component needs, injected together: a {@link Ticker} for intervals, an
 * {@link InstantSource} for wall time, and a scheduler for timers. Production code uses {@link
 * #system(ScheduledExecutorService)}; tests pass {@code FakeClock.timeSource()}.
 *
 * @param ticker monotonic nanoseconds
 * @param wall wall-clock instants (logs, leases, cache timestamps)
 * @param scheduler timers; tasks must not block it
 */
public record TimeSource(Ticker ticker, InstantSource wall, ScheduledExecutorService scheduler) {

  public TimeSource {
    if (ticker == null || wall == null || scheduler == null) {
      throw new NullPointerException("ticker, wall and scheduler are required");
    }
  }

  /** Real time with the given scheduler for timers. */
  public static TimeSource system(ScheduledExecutorService scheduler) {
    return new TimeSource(Ticker.system(), InstantSource.system(), scheduler);
  }
}
