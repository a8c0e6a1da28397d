package dev.portage.core.backoff;

import java.time.Duration;

/**
 * The delays of one retry or reconnect loop: each {@link #nextDelayNanos()} is the wait before the
 * next attempt, growing until {@link #reset()} after a success. Get one from {@link
 * BackoffPolicy#newBackoff}. Not thread-safe: a backoff belongs to the one loop (usually one event
 * loop or scheduler task) that uses it.
 */
public interface Backoff {

  /** The wait before the next attempt, in nanoseconds; counts one attempt. */
  long nextDelayNanos();

  /** The wait before the next attempt; counts one attempt. */
  default Duration nextDelay() {
    return Duration.ofNanos(nextDelayNanos());
  }

  /** Starts over from the minimum delay; call after a success. */
  void reset();

  /** Delays handed out since creation or the last {@link #reset()}. */
  int attempts();
}
