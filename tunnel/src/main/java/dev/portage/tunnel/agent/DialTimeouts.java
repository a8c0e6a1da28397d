package dev.portage.tunnel.agent;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Timeouts of one fixed length for things started on one event loop (a server connection's dials,
 * its backend sockets closing on request), kept with at most one task armed on the injected
 * scheduler. Because every timeout has the same length, deadlines expire in start order: a FIFO queue
 * and one timer for its head suffice, and an item that finished early is simply skipped when the timer
 * fires. Arming a timer per item instead woke the scheduler's thread on every dial (its new task became
 * the head of an empty queue), a cross-thread wake-up per dial on a path that otherwise stays on one
 * event loop; here the timer is re-armed only when it fires, about once per timeout length.
 *
 * <p>Threading: confined to the owner's event loop ({@code loop}); the scheduler's task hops back onto
 * it before touching the queue.
 *
 * @param <T> what times out; {@code live} says whether it still needs its timeout
 */
final class DialTimeouts<T> {
  private record Entry<T>(T item, long deadlineNanos) {}

  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final long timeoutNanos;
  private final Executor loop;
  private final Predicate<T> live;
  private final Consumer<T> onTimeout;
  private final ArrayDeque<Entry<T>> queue = new ArrayDeque<>();
  private ScheduledFuture<?> timer;
  private boolean closed;

  /**
   * @param loop the owner's event loop, where {@code live} and {@code onTimeout} run
   * @param live whether an item still waits for its timeout (false once it finished)
   * @param onTimeout runs on {@code loop} for a live item whose deadline passed
   */
  DialTimeouts(ScheduledExecutorService scheduler, Ticker ticker, Duration timeout, Executor loop,
      Predicate<T> live, Consumer<T> onTimeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
    }
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.timeoutNanos = timeout.toNanos();
    this.loop = loop;
    this.live = live;
    this.onTimeout = onTimeout;
  }

  /** Starts {@code item}'s timeout now. On the loop. */
  void add(T item) {
    if (closed) {
      return;
    }
    queue.add(new Entry<>(item, ticker.nanoTime() + timeoutNanos));
    if (timer == null) {
      arm(timeoutNanos);
    }
  }

  /** Drops finished items from the head so the queue stays short while nothing times out. On the loop. */
  void trim() {
    Entry<T> head;
    while ((head = queue.peek()) != null && !live.test(head.item())) {
      queue.poll();
    }
  }

  /** Items whose timeout is still counted (finished ones not yet trimmed included). */
  int size() {
    return queue.size();
  }

  /** Cancels the timer and forgets every item. On the loop; idempotent. */
  void close() {
    closed = true;
    queue.clear();
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  private void arm(long delayNanos) {
    timer = scheduler.schedule(this::fireOnLoop, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
  }

  private void fireOnLoop() {
    try {
      loop.execute(this::fire);
    } catch (RejectedExecutionException e) {
      // the event loop is gone (shutting down): nothing is left to time out
    }
  }

  private void fire() {
    timer = null;
    if (closed) {
      return;
    }
    long now = ticker.nanoTime();
    Entry<T> head;
    while ((head = queue.peek()) != null) {
      if (!live.test(head.item())) {
        queue.poll();
      } else if (head.deadlineNanos() - now <= 0) {
        queue.poll();
        onTimeout.accept(head.item());
      } else {
        break;
      }
    }
    if (head != null && !closed) {
      arm(head.deadlineNanos() - now);
    }
  }
}
