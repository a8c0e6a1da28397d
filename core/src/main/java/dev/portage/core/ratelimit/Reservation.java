package dev.portage.core.ratelimit;

import java.time.Duration;

/**
 * Tokens taken from a {@link TokenBucket} ahead of time: the holder should act only after {@link
 * #delay()}, or {@link #cancel()} to give the tokens back. Thread-safe.
 */
public final class Reservation {

  private final TokenBucket bucket;
  private final boolean ok;
  final int tokens;
  /** Ticker time after which the tokens are paid for; {@link TokenBucket#NEVER} when not ok. */
  final long timeToAct;
  /** The bucket's rate when the reservation was made. */
  final double rate;
  /** Guarded by the bucket's lock. */
  boolean cancelled;

  Reservation(TokenBucket bucket, boolean ok, int tokens, long timeToAct, double rate) {
    this.bucket = bucket;
    this.ok = ok;
    this.tokens = tokens;
    this.timeToAct = timeToAct;
    this.rate = rate;
  }

  /** Whether the bucket granted the tokens; a refused reservation took nothing and never becomes due. */
  public boolean ok() {
    return ok;
  }

  /** Nanoseconds from now until the tokens may be used: 0 when due, {@code Long.MAX_VALUE} if not ok. */
  public long delayNanos() {
    if (!ok) {
      return TokenBucket.NEVER;
    }
    return Math.max(0, timeToAct - bucket.now());
  }

  /** {@link #delayNanos()} as a duration. */
  public Duration delay() {
    return Duration.ofNanos(delayNanos());
  }

  /**
   * Gives the tokens back, minus those later reservations already counted on, as Go's {@code
   * CancelAt}. Does nothing once the reservation's time has passed, when it was not ok, or the second
   * time.
   */
  public void cancel() {
    if (ok) {
      bucket.cancel(this);
    }
  }

  @Override
  public String toString() {
    return ok ? "Reservation{tokens=" + tokens + ", delayNanos=" + delayNanos() + '}' : "Reservation{not ok}";
  }
}
