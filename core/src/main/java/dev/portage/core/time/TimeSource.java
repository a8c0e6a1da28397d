package dev.portage.core.time;

import io.netty.util.concurrent.EventExecutor;
import java.time.InstantSource;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

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

  /**
   * Runs {@code task} once after {@code delayNanos}, on {@code loop} when this is real time and
   * {@code loop} is given and running, else on {@link #scheduler()}. For a timer per request
   * (a route's timeout): a loop's own timer queue takes no lock and a cancel on the loop removes
   * the task at once, where the shared scheduler's queue is one lock every loop takes twice per
   * request; the task then runs on the loop that serves the request. Under a fake clock every timer
   * stays on the scheduler the test drives.
   */
  public ScheduledFuture<?> scheduleOn(EventExecutor loop, Runnable task, long delayNanos) {
    if (loop != null && ticker == Ticker.system() && !loop.isShuttingDown()) {
      return loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }
    return scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * A new single-thread timer on a daemon thread named {@code threadName}, for {@link
   * #system(ScheduledExecutorService)}. Cancelled tasks leave its queue at once: components cancel
   * a timeout on almost every connection (header, dial, idle), and a queue that kept each until its
   * deadline would hold every finished connection's objects that long. The caller shuts it down.
   */
  public static ScheduledExecutorService newTimer(String threadName) {
    if (threadName == null || threadName.isBlank()) {
      throw new IllegalArgumentException("threadName: '" + threadName + "' (expected: a name)");
    }
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().daemon().name(threadName).factory());
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }
}
