package dev.portage.control.rules;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Per-type debounce of store changes: a type is flushed once it has been quiet for {@code after}, or
 * at the latest {@code max} after its first unflushed change (Istio's debounce). One timer per type
 * with pending changes; it re-arms itself instead of being rescheduled on every change.
 *
 * <p>Threading: owned by the given serial executor; {@link #changed} must be called on it, and timer
 * callbacks hop onto it.
 */
final class Debouncer {

  /** Receives a type to re-list and the ticker time of its first change. */
  interface Flush {
    void flush(RuleKind kind, long firstChangeNanos);
  }

  private final long afterNanos;
  private final long maxNanos;
  private final Ticker ticker;
  private final ScheduledExecutorService scheduler;
  private final Executor serial;
  private final Flush flush;
  private final Map<RuleKind, Pending> pending = new EnumMap<>(RuleKind.class);
  private boolean closed;

  Debouncer(
      Duration after, Duration max, Ticker ticker, ScheduledExecutorService scheduler, Executor serial, Flush flush) {
    this.afterNanos = after.toNanos();
    this.maxNanos = max.toNanos();
    this.ticker = ticker;
    this.scheduler = scheduler;
    this.serial = serial;
    this.flush = flush;
  }

  void changed(RuleKind kind) {
    if (closed) {
      return;
    }
    long now = ticker.nanoTime();
    Pending p = pending.get(kind);
    if (p != null) {
      p.last = now;
      return;
    }
    p = new Pending(now);
    pending.put(kind, p);
    arm(kind, p, afterNanos);
  }

  void close() {
    closed = true;
    for (Pending p : pending.values()) {
      p.timer.cancel(false);
    }
    pending.clear();
  }

  private void arm(RuleKind kind, Pending p, long delayNanos) {
    p.timer = scheduler.schedule(() -> serial.execute(() -> fire(kind, p)), delayNanos, TimeUnit.NANOSECONDS);
  }

  private void fire(RuleKind kind, Pending p) {
    if (closed || pending.get(kind) != p) {
      return;
    }
    long now = ticker.nanoTime();
    long due = Math.min(p.last + afterNanos, p.first + maxNanos);
    if (now < due) {
      arm(kind, p, due - now);
      return;
    }
    pending.remove(kind);
    flush.flush(kind, p.first);
  }

  private static final class Pending {
    final long first;
    long last;
    ScheduledFuture<?> timer;

    Pending(long now) {
      this.first = now;
      this.last = now;
    }
  }
}
