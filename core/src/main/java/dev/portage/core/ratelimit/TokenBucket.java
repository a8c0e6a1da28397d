package dev.portage.core.ratelimit;

import dev.portage.core.time.Ticker;
import java.time.Duration;

/**
 * A token bucket with the semantics of Go's {@code golang.org/x/time/rate.Limiter}: tokens arrive at
 * {@link #rate()} per second up to {@link #burst()}, the bucket starts full, and callers either take
 * tokens now ({@link #tryAcquire}), reserve them with a delay ({@link #reserve}) or wait for them
 * ({@link #acquire}). A rate of {@link #INF} allows everything and ignores the burst; a rate of 0 lets
 * only the tokens already in the bucket be spent.
 *
 * <p>Thread-safe. Every operation takes one short, uncontended-fast lock over primitive fields and
 * allocates nothing on the {@code tryAcquire} path; the ticker is read outside the lock, so a reading
 * older than the last committed one counts as that one (time never runs backwards for the bucket).
 */
public final class TokenBucket {

  /** A rate that allows every request, whatever the burst. */
  public static final double INF = Double.POSITIVE_INFINITY;

  static final long NANOS_PER_SECOND = 1_000_000_000L;
  /** The delay of a reservation that can never be honoured, like Go's {@code InfDuration}. */
  static final long NEVER = Long.MAX_VALUE;

  private final Ticker ticker;
  private final Sleeper sleeper;
  private final Object lock = new Object();

  // Guarded by lock.
  private double rate;
  private int burst;
  private double tokens;
  /** Ticker time of the last state change; readings before it count as it. */
  private long last;
  /** Time to act of the latest granted reservation, used by cancel to spot later reservations. */
  private long lastEvent;

  /**
   * A bucket with the given rate (tokens per second, {@code >= 0}, or {@link #INF}) and burst ({@code
   * >= 0}), full at creation, reading time from {@code ticker}.
   */
  public TokenBucket(double rate, int burst, Ticker ticker) {
    this(rate, burst, ticker, null);
  }

  /** Same as the public constructor with an injectable sleeper for {@link #acquire}; null means real parking. */
  TokenBucket(double rate, int burst, Ticker ticker, Sleeper sleeper) {
    checkRate(rate);
    checkBurst(burst);
    if (ticker == null) {
      throw new NullPointerException("ticker");
    }
    this.ticker = ticker;
    this.sleeper = sleeper != null ? sleeper : Sleeper.parking(ticker);
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
    this.last = ticker.nanoTime();
    this.lastEvent = last;
  }

  /** The rate that lets one token arrive every {@code interval}; a zero interval means {@link #INF}. */
  public static double every(Duration interval) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("interval: " + interval + " (expected: >= 0)");
    }
    if (interval.isZero()) {
      return INF;
    }
    // toSeconds + nanos keeps intervals beyond Long.MAX_VALUE nanoseconds (~292 years) representable.
    double seconds = interval.getSeconds() + interval.getNano() / (double) NANOS_PER_SECOND;
    return 1.0 / seconds;
  }

  /** Takes one token if it is available now; never blocks. */
  public boolean tryAcquire() {
    return tryAcquire(1);
  }

  /** Takes {@code n} tokens if they are all available now (Go's {@code AllowN}); never blocks. */
  public boolean tryAcquire(int n) {
    checkN(n);
    long now = ticker.nanoTime();
    synchronized (lock) {
      return reserveLocked(now, n, 0) != NEVER;
    }
  }

  /**
   * Reserves {@code n} tokens, going into debt if needed (Go's {@code ReserveN}); the reservation
   * says how long to wait before acting. It is not {@linkplain Reservation#ok() ok} when {@code n}
   * exceeds the burst, or when the rate is 0 and the tokens are not there.
   */
  public Reservation reserve(int n) {
    return reserve(n, NEVER);
  }

  /** Reserves {@code n} tokens if the wait for them is at most {@code maxWaitNanos}. */
  Reservation reserve(int n, long maxWaitNanos) {
    checkN(n);
    long now = ticker.nanoTime();
    synchronized (lock) {
      long wait = reserveLocked(now, n, maxWaitNanos);
      if (wait == NEVER) {
        return new Reservation(this, false, 0, NEVER, rate);
      }
      return new Reservation(this, true, n, saturatedAdd(Math.max(now, last), wait), rate);
    }
  }

  /**
   * Waits until {@code n} tokens are available (Go's {@code WaitN}), at most {@code timeout}. Returns
   * false at once, without waiting or taking anything, when the wait would end after the deadline
   * (or never ends: rate 0 and the tokens are gone).
   *
   * @throws IllegalArgumentException if {@code n} exceeds the burst (and the rate is not {@link #INF}):
   *     such a request can never succeed
   * @throws InterruptedException if interrupted while waiting; the reservation is then cancelled
   */
  public boolean acquire(int n, Duration timeout) throws InterruptedException {
    checkN(n);
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout: " + timeout + " (expected: >= 0)");
    }
    long timeoutNanos = saturatedNanos(timeout);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    Reservation r;
    long now = ticker.nanoTime();
    synchronized (lock) {
      if (n > burst && rate != INF) {
        throw new IllegalArgumentException("n: " + n + " (expected: <= burst " + burst + ")");
      }
      long wait = reserveLocked(now, n, timeoutNanos);
      if (wait == NEVER) {
        return false; // the deadline is too near, or the rate is 0 and the tokens are gone
      }
      if (wait == 0) {
        return true;
      }
      r = new Reservation(this, true, n, saturatedAdd(Math.max(now, last), wait), rate);
    }
    try {
      sleeper.sleepNanos(r.delayNanos());
    } catch (InterruptedException e) {
      r.cancel(); // lets others use the tokens sooner, as Go's WaitN does on a cancelled context
      throw e;
    }
    return true;
  }

  /** Changes the rate from now on; tokens accumulated so far at the old rate are kept. */
  public void setRate(double newRate) {
    checkRate(newRate);
    long now = ticker.nanoTime();
    synchronized (lock) {
      advanceLocked(now);
      rate = newRate;
    }
  }

  /** Changes the burst from now on; a smaller burst caps the tokens at the next advance. */
  public void setBurst(int newBurst) {
    checkBurst(newBurst);
    long now = ticker.nanoTime();
    synchronized (lock) {
      advanceLocked(now);
      burst = newBurst;
    }
  }

  /**
   * Tokens in the bucket now; negative while reservations are in debt, {@link #INF} while the rate
   * is {@link #INF}.
   */
  public double tokens() {
    long now = ticker.nanoTime();
    synchronized (lock) {
      if (rate == INF) {
        return INF;
      }
      return advancedTokens(Math.max(now, last));
    }
  }

  /** Tokens per second. */
  public double rate() {
    synchronized (lock) {
      return rate;
    }
  }

  /** Most tokens the bucket holds. */
  public int burst() {
    synchronized (lock) {
      return burst;
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "TokenBucket{rate=" + rate + ", burst=" + burst + ", tokens=" + tokens + '}';
    }
  }

  /**
   * Go's {@code reserveN}: takes {@code n} tokens and returns the wait until they are paid for, or
   * {@link #NEVER} when the request is refused (then only time moves). Allocates nothing.
   */
  private long reserveLocked(long now, int n, long maxWaitNanos) {
    if (rate == INF) {
      return 0;
    }
    long t = Math.max(now, last);
    double left = advancedTokens(t) - n;
    long wait = 0;
    if (left < 0) {
      wait = nanosForTokens(rate, -left);
    }
    if (n > burst || wait > maxWaitNanos || wait == NEVER) {
      // Not granted: committing the advance is equivalent to leaving the state alone.
      return NEVER;
    }
    last = t;
    tokens = left;
    lastEvent = saturatedAdd(t, wait);
    return wait;
  }

  /** Gives back what a reservation took, minus the tokens later reservations took after it (Go's CancelAt). */
  void cancel(Reservation r) {
    long now = ticker.nanoTime();
    synchronized (lock) {
      if (r.cancelled) {
        return;
      }
      r.cancelled = true;
      if (rate == INF || r.tokens == 0 || r.timeToAct < now) {
        return;
      }
      // Tokens reserved after r pushed lastEvent past r.timeToAct; those stay taken.
      double restore = r.tokens - tokensForNanos(r.rate, lastEvent - r.timeToAct);
      if (restore <= 0) {
        return;
      }
      long t = Math.max(now, last);
      tokens = Math.min(burst, advancedTokens(t) + restore);
      last = t;
      if (r.timeToAct == lastEvent) {
        long prevEvent = r.timeToAct - nanosForTokens(r.rate, r.tokens);
        if (prevEvent >= t) {
          lastEvent = prevEvent;
        }
      }
    }
  }

  /** Current time of the bucket's ticker. */
  long now() {
    return ticker.nanoTime();
  }

  /**
   * Nanoseconds from now until {@code n} tokens are available, 0 if they are, {@link #NEVER} if they
   * never will be; nothing is taken.
   */
  long nanosUntilAvailable(int n) {
    long now = ticker.nanoTime();
    synchronized (lock) {
      if (rate == INF) {
        return 0;
      }
      long t = Math.max(now, last);
      double missing = n - advancedTokens(t);
      if (missing <= 0) {
        return 0;
      }
      return n > burst ? NEVER : saturatedAdd(t - now, nanosForTokens(rate, missing));
    }
  }

  private void advanceLocked(long now) {
    long t = Math.max(now, last);
    // Under INF the bucket counts as full, so a switch back to a finite rate starts with the burst.
    tokens = rate == INF ? burst : advancedTokens(t);
    last = t;
  }

  private double advancedTokens(long t) {
    if (rate == INF) {
      return burst;
    }
    double refilled = tokens + tokensForNanos(rate, t - last);
    return Math.min(refilled, burst);
  }

  static double tokensForNanos(double rate, long nanos) {
    if (rate <= 0 || nanos <= 0) {
      return 0;
    }
    return nanos * rate / NANOS_PER_SECOND;
  }

  /** Time to accumulate {@code tokens} at {@code rate}, rounded up so the tokens are there after it. */
  static long nanosForTokens(double rate, double tokens) {
    if (tokens <= 0) {
      return 0;
    }
    if (rate <= 0) {
      return NEVER;
    }
    double nanos = Math.ceil(tokens * NANOS_PER_SECOND / rate);
    return nanos >= NEVER ? NEVER : (long) nanos; // a huge wait saturates instead of wrapping
  }

  static long saturatedAdd(long a, long b) {
    long sum = a + b;
    // Overflow iff both operands have the sign opposite to the sum.
    if (((a ^ sum) & (b ^ sum)) < 0) {
      return b > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
    return sum;
  }

  static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return d.isNegative() ? Long.MIN_VALUE : NEVER;
    }
  }

  private static void checkRate(double rate) {
    if (!(rate >= 0)) { // also rejects NaN
      throw new IllegalArgumentException("rate: " + rate + " (expected: >= 0 or TokenBucket.INF)");
    }
  }

  private static void checkBurst(int burst) {
    if (burst < 0) {
      throw new IllegalArgumentException("burst: " + burst + " (expected: >= 0)");
    }
  }

  private static void checkN(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("n: " + n + " (expected: >= 0)");
    }
  }
}
