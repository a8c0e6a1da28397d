package dev.portage.core.time;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test fixture: one clock that is at once a {@link Ticker}, an {@link InstantSource} and a {@link
 * ScheduledExecutorService}. Time moves only when a test calls {@link #advance}; due tasks then run on
 * the calling thread in deadline order (tasks they schedule that fall due inside the same advance run
 * too). {@code schedule()} and {@code execute()} never run a task themselves: {@code execute} queues it
 * for the next {@link #runDue()} or {@link #advance}. Thread-safe.
 */
public final class FakeClock implements Ticker, InstantSource {

  private static final Instant DEFAULT_EPOCH = Instant.parse("2026-01-01T00:00:00Z");

  private final Object lock = new Object();
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private final AtomicLong sequence = new AtomicLong();
  private final Instant epoch;
  private final Scheduler scheduler = new Scheduler();
  private long nanos;

  public FakeClock() {
    this(DEFAULT_EPOCH);
  }

  public FakeClock(Instant epoch) {
    this.epoch = epoch;
  }

  @Override
  public long nanoTime() {
    synchronized (lock) {
      return nanos;
    }
  }

  @Override
  public Instant instant() {
    return epoch.plusNanos(nanoTime());
  }

  /** The scheduler face of this clock. */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** Ticker, wall time and scheduler of this clock, ready to inject. */
  public TimeSource timeSource() {
    return new TimeSource(this, this, scheduler);
  }

  /** Moves time forward and runs every task that falls due, in deadline order; returns how many ran. */
  public int advance(Duration d) {
    return advance(d.toNanos(), TimeUnit.NANOSECONDS);
  }

  public int advance(long amount, TimeUnit unit) {
    if (amount < 0) {
      throw new IllegalArgumentException("amount: " + amount + " (expected: >= 0)");
    }
    long target;
    synchronized (lock) {
      target = nanos + unit.toNanos(amount);
    }
    int ran = 0;
    while (true) {
      Task<?> next;
      synchronized (lock) {
        next = queue.peek();
        if (next == null || next.deadline > target) {
          nanos = target;
          return ran;
        }
        queue.poll();
        nanos = Math.max(nanos, next.deadline);
      }
      next.runOnce();
      ran++;
    }
  }

  /** Runs the tasks due now (including ones queued by {@code execute}) without moving time. */
  public int runDue() {
    return advance(0, TimeUnit.NANOSECONDS);
  }

  /** Tasks waiting to run, cancelled ones excluded. */
  public int pendingTasks() {
    synchronized (lock) {
      int n = 0;
      for (Task<?> t : queue) {
        if (!t.isCancelled()) {
          n++;
        }
      }
      return n;
    }
  }

  /** Delay until the next pending task, or null if none. */
  public Duration nextDeadline() {
    synchronized (lock) {
      return queue.stream()
          .filter(t -> !t.isCancelled())
          .map(t -> Duration.ofNanos(t.deadline - nanos))
          .min(Duration::compareTo)
          .orElse(null);
    }
  }

  private <V> Task<V> enqueue(Callable<V> callable, long delayNanos, long periodNanos) {
    synchronized (lock) {
      Task<V> t =
          new Task<>(callable, nanos + Math.max(0, delayNanos), periodNanos, sequence.getAndIncrement());
      queue.add(t);
      return t;
    }
  }

  private final class Task<V> extends FutureTask<V> implements ScheduledFuture<V> {
    final long seq;
    final long period; // > 0 fixed rate, < 0 fixed delay, 0 one-shot
    long deadline;

    Task(Callable<V> callable, long deadline, long period, long seq) {
      super(callable);
      this.deadline = deadline;
      this.period = period;
      this.seq = seq;
    }

    void runOnce() {
      if (period == 0) {
        run();
        return;
      }
      if (runAndReset()) {
        synchronized (lock) {
          deadline = period > 0 ? deadline + period : nanos - period;
          queue.add(this);
        }
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      synchronized (lock) {
        queue.remove(this);
      }
      return cancelled;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(deadline - nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      Task<?> other = (Task<?>) o;
      int c = Long.compare(deadline, other.deadline);
      return c != 0 ? c : Long.compare(seq, other.seq);
    }

    @Override
    public V get() throws InterruptedException, ExecutionException {
      if (!isDone()) {
        throw new IllegalStateException("fake clock task not run yet; advance the clock first");
      }
      return super.get();
    }
  }

  private final class Scheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private volatile boolean shutdown;

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      return enqueue(() -> {
        command.run();
        return null;
      }, unit.toNanos(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      return enqueue(callable, unit.toNanos(delay), 0);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      if (period <= 0) {
        throw new IllegalArgumentException("period: " + period + " (expected: > 0)");
      }
      return enqueue(() -> {
        command.run();
        return null;
      }, unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
        Runnable command, long initialDelay, long delay, TimeUnit unit) {
      if (delay <= 0) {
        throw new IllegalArgumentException("delay: " + delay + " (expected: > 0)");
      }
      return enqueue(() -> {
        command.run();
        return null;
      }, unit.toNanos(initialDelay), -unit.toNanos(delay));
    }

    @Override
    public void execute(Runnable command) {
      if (shutdown) {
        throw new java.util.concurrent.RejectedExecutionException("fake scheduler is shut down");
      }
      schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      List<Runnable> dropped;
      synchronized (lock) {
        dropped = new ArrayList<>(queue);
        queue.clear();
      }
      for (Runnable r : dropped) {
        ((Task<?>) r).cancel(false);
      }
      return Collections.unmodifiableList(dropped);
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return shutdown;
    }
  }
}
