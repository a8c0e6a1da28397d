package dev.portage.core.ratelimit;

import dev.portage.core.time.Ticker;
import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a function when asked, but never more often than a token bucket allows (one run per {@code
 * minInterval}, bursts of {@code burstRuns}) and at least every {@code maxInterval}: kube-proxy's
 * {@code BoundedFrequencyRunner}, used to turn a stream of change notifications into bounded syncs.
 *
 * <p>Requests from any thread are non-blocking and coalesce: {@link #run()} while a request is pending
 * adds nothing. The function runs on the injected scheduler, one run at a time, never concurrently
 * with itself; give the runner its own scheduler if the function is slow. Timeline of one turn:
 *
 * <pre>
 * request or timer ─▶ token available? ── yes ─▶ fn() ─▶ lastRun = now, timer = maxInterval
 *                                      └─ no ──▶ timer = min(minInterval − sinceLastRun, timer left)
 * </pre>
 *
 * <p>A function that throws is logged at WARN and counted in {@link #failures()}; the loop goes on.
 */
public final class BoundedFrequencyRunner implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(BoundedFrequencyRunner.class);

  private final String name;
  private final Runnable fn;
  private final long minIntervalNanos;
  private final long maxIntervalNanos;
  private final int burstRuns;
  /** Null when minInterval is 0: every request may run. */
  private final TokenBucket limiter;
  private final Ticker ticker;
  private final ScheduledExecutorService scheduler;
  private final AtomicLong runs = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();

  private final Object lock = new Object();
  // Everything below is guarded by lock.
  private boolean started;
  private boolean closed;
  private boolean runRequested;
  private boolean timerFired;
  /** A retryAfter arrived since the last turn looked (kube-proxy's retry channel). */
  private boolean retrySignalled;
  /** Whether {@link #retryTime} holds the earliest retry asked for and not yet satisfied. */
  private boolean retryPending;
  private long retryTime;
  /** A turn is queued on or running on the scheduler; at most one exists, which serialises fn. */
  private boolean turnQueued;
  private ScheduledFuture<?> timer;
  private long timerDeadline;
  /** Identifies the current timer so a cancelled one that fires anyway is ignored. */
  private long timerGeneration;
  private long lastRun;
  /** The thread inside fn, so close() can wait for it (unless fn itself closes the runner). */
  private Thread fnThread;

  /**
   * A runner that is idle until {@link #start()}.
   *
   * @param name for logs
   * @param fn the function to run; exceptions it throws are counted, not propagated
   * @param minInterval least time between runs beyond the burst; 0 means no rate limit
   * @param maxInterval most time between runs, whether or not anyone asks; {@code >= minInterval}
   * @param burstRuns runs allowed back to back before {@code minInterval} applies; {@code >= 1}
   * @param time ticker for intervals and the scheduler that runs fn and the timer
   */
  public BoundedFrequencyRunner(
      String name,
      Runnable fn,
      Duration minInterval,
      Duration maxInterval,
      int burstRuns,
      TimeSource time) {
    if (name == null || fn == null || minInterval == null || maxInterval == null || time == null) {
      throw new NullPointerException("name, fn, minInterval, maxInterval and time are required");
    }
    if (minInterval.isNegative()) {
      throw new IllegalArgumentException("minInterval: " + minInterval + " (expected: >= 0)");
    }
    if (maxInterval.isNegative() || maxInterval.isZero()) {
      throw new IllegalArgumentException("maxInterval: " + maxInterval + " (expected: > 0)");
    }
    if (maxInterval.compareTo(minInterval) < 0) {
      throw new IllegalArgumentException(
          "maxInterval: " + maxInterval + " (expected: >= minInterval " + minInterval + ")");
    }
    if (burstRuns < 1) {
      throw new IllegalArgumentException("burstRuns: " + burstRuns + " (expected: >= 1)");
    }
    this.name = name;
    this.fn = fn;
    this.minIntervalNanos = TokenBucket.saturatedNanos(minInterval);
    this.maxIntervalNanos = TokenBucket.saturatedNanos(maxInterval);
    this.burstRuns = burstRuns;
    this.ticker = time.ticker();
    this.scheduler = time.scheduler();
    this.limiter =
        minInterval.isZero() ? null : new TokenBucket(TokenBucket.every(minInterval), burstRuns, ticker);
    this.lastRun = ticker.nanoTime() - minIntervalNanos;
  }

  /** Starts the loop: arms the max-interval timer and serves requests made before. Once only. */
  public void start() {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException(name + ": closed");
      }
      if (started) {
        throw new IllegalStateException(name + ": already started");
      }
      started = true;
      resetTimerLocked(ticker.nanoTime(), maxIntervalNanos);
      if (runRequested || retrySignalled) {
        queueTurnLocked();
      }
    }
    log.info("{}: started (minInterval {}, maxInterval {}, burstRuns {})",
        name, Duration.ofNanos(minIntervalNanos), Duration.ofNanos(maxIntervalNanos), burstRuns);
  }

  /**
   * Asks for a run as soon as the rate limit allows. Non-blocking; coalesces with a pending request.
   * Before {@link #start()} the request waits for the start; after {@link #close()} it is ignored.
   */
  public void run() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      runRequested = true;
      queueTurnLocked();
    }
  }

  /**
   * Asks for a run no later than {@code delay} from now (still subject to the rate limit), for example
   * from inside fn after a partial failure. The earliest of several pending retries wins; any run
   * that starts after the call satisfies it.
   */
  public void retryAfter(Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay: " + delay + " (expected: >= 0)");
    }
    long at = TokenBucket.saturatedAdd(ticker.nanoTime(), TokenBucket.saturatedNanos(delay));
    synchronized (lock) {
      if (closed || (retryPending && retryTime <= at)) {
        return;
      }
      retryPending = true;
      retryTime = at;
      retrySignalled = true;
      queueTurnLocked();
    }
  }

  /** Times fn has been called (including calls that threw). */
  public long runs() {
    return runs.get();
  }

  /** Times fn has thrown. */
  public long failures() {
    return failures.get();
  }

  /**
   * Stops the loop and cancels its timer. When this returns, fn is not running and will not run
   * again (if fn itself calls close, its current run finishes after close returns). Idempotent.
   */
  @Override
  public void close() {
    boolean interrupted = false;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      cancelTimerLocked();
      while (fnThread != null && fnThread != Thread.currentThread()) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          interrupted = true; // finish closing, then restore the flag
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    log.info("{}: closed after {} runs ({} failed)", name, runs.get(), failures.get());
  }

  @Override
  public String toString() {
    return "BoundedFrequencyRunner{" + name + ", runs=" + runs.get() + ", failures=" + failures.get() + '}';
  }

  /** One turn of the loop; runs on the scheduler and is the only place fn is called. */
  private void turn() {
    try {
      while (true) {
        boolean tryRun;
        boolean retry;
        synchronized (lock) {
          if (closed) {
            return;
          }
          tryRun = runRequested || timerFired;
          retry = retrySignalled;
          runRequested = false;
          timerFired = false;
          retrySignalled = false;
          if (!tryRun && !retry) {
            return;
          }
        }
        // Run first, then apply retries, so a retry asked for inside fn outlives the timer reset.
        if (tryRun) {
          tryRun();
        }
        if (retry) {
          applyRetry();
        }
      }
    } finally {
      synchronized (lock) {
        turnQueued = false;
        // A request that raced with the last look (or survived an Error from fn) gets a new turn.
        if (runRequested || timerFired || retrySignalled) {
          queueTurnLocked();
        }
      }
    }
  }

  private void tryRun() {
    long now = ticker.nanoTime();
    if (limiter == null || limiter.tryAcquire()) {
      synchronized (lock) {
        if (closed) {
          return;
        }
        fnThread = Thread.currentThread();
        retryPending = false; // this run satisfies every retry asked for before it
      }
      runs.incrementAndGet();
      try {
        fn.run();
      } catch (RuntimeException e) {
        failures.incrementAndGet();
        log.warn("{}: run failed", name, e);
      } finally {
        synchronized (lock) {
          fnThread = null;
          lastRun = ticker.nanoTime();
          lock.notifyAll();
          if (!closed) {
            resetTimerLocked(lastRun, maxIntervalNanos);
          }
        }
      }
      log.debug("{}: ran, next possible in {}, periodic in {}",
          name, Duration.ofNanos(minIntervalNanos), Duration.ofNanos(maxIntervalNanos));
      return;
    }
    synchronized (lock) {
      if (closed) {
        return;
      }
      long nextPossible = minIntervalNanos - (now - lastRun);
      // Never before the bucket can grant a token, so a timer firing early does not spin.
      nextPossible = Math.max(nextPossible, limiter.nanosUntilAvailable(1));
      long next = timer != null ? Math.min(nextPossible, timerDeadline - now) : nextPossible;
      next = Math.max(next, 1);
      log.debug("{}: rate limited, next try in {}", name, Duration.ofNanos(next));
      resetTimerLocked(now, next);
    }
  }

  private void applyRetry() {
    synchronized (lock) {
      if (closed || !retryPending) {
        return;
      }
      retryPending = false;
      long now = ticker.nanoTime();
      long in = Math.max(0, retryTime - now);
      if (timer == null || in < timerDeadline - now) {
        log.debug("{}: retrying in {}", name, Duration.ofNanos(in));
        resetTimerLocked(now, in);
      }
    }
  }

  private void onTimer(long generation) {
    synchronized (lock) {
      if (closed || generation != timerGeneration) {
        return;
      }
      timer = null;
      timerFired = true;
      if (turnQueued) {
        return;
      }
      turnQueued = true;
    }
    turn(); // already on the scheduler: take the turn here instead of queueing another task
  }

  private void queueTurnLocked() {
    if (!started || closed || turnQueued) {
      return;
    }
    turnQueued = true;
    try {
      scheduler.execute(this::turn);
    } catch (RejectedExecutionException e) {
      turnQueued = false;
      log.warn("{}: scheduler rejected a run; was it shut down before the runner was closed?", name, e);
    }
  }

  private void resetTimerLocked(long now, long delayNanos) {
    cancelTimerLocked();
    long generation = ++timerGeneration;
    timerDeadline = TokenBucket.saturatedAdd(now, delayNanos);
    try {
      timer = scheduler.schedule(() -> onTimer(generation), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      log.warn("{}: scheduler rejected the timer; was it shut down before the runner was closed?", name, e);
    }
  }

  private void cancelTimerLocked() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
