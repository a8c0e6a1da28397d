package dev.portage.core.ratelimit;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A token bucket with the semantics of Go's {@code golang.org/x/time/rate.Limiter}: tokens arrive at
 * {@link #rate()} per second up to {@link #burst()}, the bucket starts full, and callers either take
 * tokens now ({@link #tryAcquire}), reserve them with a delay ({@link #reserve}) or wait for them
 * ({@link #acquire}). A rate of {@link #INF} allows everything and ignores the burst; a rate of 0 lets
 * only the tokens already in the bucket be spent.
 *
 * <p>Thread-safe. {@link #tryAcquire} is lock-free and allocates nothing: the bucket's state is one
 * word, GCRA-style — the (origin-relative) time at which the bucket would have been empty, so the
 * tokens at time t are {@code min(burst, (t - empty) * rate)} — and a grant is one compare-and-set on
 * it; a refusal writes nothing. Reservations, cancellation, rate and burst changes take a lock and
 * compare-and-set the same word (a rate or burst change seals the word and installs a new one, so a
 * concurrent {@code tryAcquire} never mixes an old rate with a new state). The ticker is read before
 * any of this, so a reading older than the last granted one counts as that one (time never runs
 * backwards for the bucket); under concurrent callers "the last granted one" may lag by the
 * interleaving, which only ever grants fewer tokens, never more than {@code burst + rate * time}.
 */
public final class TokenBucket {

  /** A rate that allows every request, whatever the burst. */
  public static final double INF = Double.POSITIVE_INFINITY;

  static final long NANOS_PER_SECOND = 1_000_000_000L;
  /** The delay of a reservation that can never be honoured, like Go's {@code InfDuration}. */
  static final long NEVER = Long.MAX_VALUE;
  /** The state word of a replaced {@link Epoch}: a NaN payload that arithmetic never produces. */
  private static final long SEALED = 0x7ff0_0000_0000_0001L;

  private final Ticker ticker;
  private final Sleeper sleeper;
  private final Object lock = new Object();
  /** Ticker time at creation; state times are doubles relative to it, so they stay small and precise. */
  private final long origin;
  /** Rate, burst and the state word; replaced only under {@link #lock}. */
  private volatile Epoch epoch;
  /**
   * Time to act of the latest granted reservation, for {@link #cancel}; written only under the lock,
   * before the state compare-and-set. {@code tryAcquire} takes the lock while it is in the future, so
   * its own grants (which Go records here as "now") need not write it.
   */
  private volatile long lastEvent;
  /** Guarded by lock: the (clamped) time of the last {@link #reserveLocked} call. */
  private long reservedAt;

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
    this.origin = ticker.nanoTime();
    this.lastEvent = origin;
    this.epoch = new Epoch(rate, burst, burst, 0, origin);
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
    for (;;) {
      Epoch ep = epoch;
      if (ep.rate == INF) {
        return true;
      }
      long word = ep.state();
      long l = ep.last();
      long t = Math.max(now, l);
      if (word == SEALED || lastEvent > t || ep.rate == 0) {
        // A rate or burst change is being installed, a reservation is in the future (the lock path
        // keeps Go's bookkeeping of it exact), or a rate of 0 (tokens, not a time, in the word).
        synchronized (lock) {
          return reserveLocked(now, n, 0) != NEVER;
        }
      }
      double tt = t - origin;
      // GCRA in nanoseconds: the empty time, moved up to "full now" if the bucket overflowed, plus
      // the time the n tokens take to arrive; granted if that is not after now.
      double empty = Math.max(Double.longBitsToDouble(word), tt - ep.burstNanos);
      double next = empty + n * ep.nanosPerToken;
      if (next > tt) {
        return false; // refused: nothing to write
      }
      if (ep.casState(word, Double.doubleToRawLongBits(next))) {
        if (t > l) {
          ep.publishLast(t);
        }
        return true;
      }
      // Another caller changed the state since the read: decide again on the new state.
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
        return new Reservation(this, false, 0, NEVER, epoch.rate);
      }
      return new Reservation(this, true, n, saturatedAdd(reservedAt, wait), epoch.rate);
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
      Epoch ep = epoch;
      if (n > ep.burst && ep.rate != INF) {
        throw new IllegalArgumentException("n: " + n + " (expected: <= burst " + ep.burst + ")");
      }
      long wait = reserveLocked(now, n, timeoutNanos);
      if (wait == NEVER) {
        return false; // the deadline is too near, or the rate is 0 and the tokens are gone
      }
      if (wait == 0) {
        return true;
      }
      r = new Reservation(this, true, n, saturatedAdd(reservedAt, wait), ep.rate);
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
      replaceEpoch(now, newRate, epoch.burst);
    }
  }

  /** Changes the burst from now on; a smaller burst caps the tokens at the next advance. */
  public void setBurst(int newBurst) {
    checkBurst(newBurst);
    long now = ticker.nanoTime();
    synchronized (lock) {
      replaceEpoch(now, epoch.rate, newBurst);
    }
  }

  /**
   * Tokens in the bucket now; negative while reservations are in debt, {@link #INF} while the rate
   * is {@link #INF}.
   */
  public double tokens() {
    long now = ticker.nanoTime();
    synchronized (lock) {
      Epoch ep = epoch;
      if (ep.rate == INF) {
        return INF;
      }
      return ep.tokensAt(ep.state(), Math.max(now, ep.last()) - origin);
    }
  }

  /** Tokens per second. */
  public double rate() {
    return epoch.rate;
  }

  /** Most tokens the bucket holds. */
  public int burst() {
    return epoch.burst;
  }

  @Override
  public String toString() {
    synchronized (lock) {
      Epoch ep = epoch;
      double tokens = ep.rate == INF ? INF : ep.tokensAt(ep.state(), ep.last() - origin);
      return "TokenBucket{rate=" + ep.rate + ", burst=" + ep.burst + ", tokens=" + tokens + '}';
    }
  }

  /**
   * Go's {@code reserveN}, holding the lock: takes {@code n} tokens and returns the wait until they
   * are paid for (from {@link #reservedAt}), or {@link #NEVER} when the request is refused (then
   * nothing changes). Allocates nothing.
   */
  private long reserveLocked(long now, int n, long maxWaitNanos) {
    Epoch ep = epoch; // current and unsealed: only replaced under the lock
    for (;;) {
      long t = Math.max(now, ep.last());
      reservedAt = t;
      if (ep.rate == INF) {
        return 0;
      }
      long word = ep.state();
      double tt = t - origin;
      double left = ep.tokensAt(word, tt) - n;
      long wait = left < 0 ? nanosForTokens(ep.rate, -left) : 0;
      if (n > ep.burst || wait > maxWaitNanos || wait == NEVER) {
        return NEVER;
      }
      long previousEvent = lastEvent;
      // Before the state: a lock-free caller that sees the new state also sees the pending event.
      lastEvent = saturatedAdd(t, wait);
      if (ep.casState(word, ep.word(left, tt))) {
        ep.raiseLast(t);
        return wait;
      }
      lastEvent = previousEvent; // a lock-free grant came first: decide again
    }
  }

  /** Gives back what a reservation took, minus the tokens later reservations took after it (Go's CancelAt). */
  void cancel(Reservation r) {
    long now = ticker.nanoTime();
    synchronized (lock) {
      if (r.cancelled) {
        return;
      }
      r.cancelled = true;
      Epoch ep = epoch;
      if (ep.rate == INF || r.tokens == 0 || r.timeToAct < now) {
        return;
      }
      // Tokens reserved after r pushed lastEvent past r.timeToAct; those stay taken.
      double restore = r.tokens - tokensForNanos(r.rate, lastEvent - r.timeToAct);
      if (restore <= 0) {
        return;
      }
      long t;
      for (;;) {
        t = Math.max(now, ep.last());
        long word = ep.state();
        double tt = t - origin;
        double tokens = Math.min(ep.burst, ep.tokensAt(word, tt) + restore);
        if (ep.casState(word, ep.word(tokens, tt))) {
          ep.raiseLast(t);
          break;
        }
      }
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
      Epoch ep = epoch;
      if (ep.rate == INF) {
        return 0;
      }
      long t = Math.max(now, ep.last());
      double missing = n - ep.tokensAt(ep.state(), t - origin);
      if (missing <= 0) {
        return 0;
      }
      return n > ep.burst ? NEVER : saturatedAdd(t - now, nanosForTokens(ep.rate, missing));
    }
  }

  /**
   * Holding the lock: seals the current epoch's word (lock-free callers then wait on the lock), and
   * installs a new rate and burst that start from the tokens there are now.
   */
  private void replaceEpoch(long now, double newRate, int newBurst) {
    Epoch old = epoch;
    long word;
    do {
      word = old.state();
    } while (!old.casState(word, SEALED));
    long t = Math.max(now, old.last());
    double tt = t - origin;
    // Under INF the bucket counts as full, so a switch back to a finite rate starts with the burst.
    double tokens = old.rate == INF ? old.burst : old.tokensAt(word, tt);
    epoch = new Epoch(newRate, newBurst, tokens, tt, t);
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

  /**
   * A rate and burst with the state word they govern. For a finite positive rate the word holds the
   * bits of a double: the origin-relative time (nanoseconds) at which the bucket would have been
   * empty, so the tokens at time tt are {@code min(burst, (tt - empty) * rate)}; for rate 0 it holds
   * the tokens themselves; under {@link #INF} it is unused. {@link #SEALED} once replaced. Beside it,
   * in the same object so that a grant writes one cache line, the ticker time of the last granted
   * change: readings before it count as it. It is raised after the state compare-and-set with a
   * release store, so a concurrent caller may miss the newest value, which only makes it count fewer
   * tokens.
   */
  private static final class Epoch {
    private static final VarHandle STATE;
    private static final VarHandle LAST;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        STATE = lookup.findVarHandle(Epoch.class, "state", long.class);
        LAST = lookup.findVarHandle(Epoch.class, "last", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final double rate;
    final int burst;
    /** Time one token takes to arrive, and a full bucket (finite positive rates; else unused). */
    final double nanosPerToken;
    final double burstNanos;
    private volatile long state;
    private volatile long last;

    Epoch(double rate, int burst, double tokens, double tt, long last) {
      this.rate = rate;
      this.burst = burst;
      this.nanosPerToken = NANOS_PER_SECOND / rate;
      this.burstNanos = burst * (double) NANOS_PER_SECOND / rate;
      this.state = word(tokens, tt);
      this.last = last;
    }

    long state() {
      return state;
    }

    boolean casState(long expected, long next) {
      return STATE.compareAndSet(this, expected, next);
    }

    long last() {
      return last;
    }

    /** A release store: on the lock-free path only, after a successful compare-and-set. */
    void publishLast(long t) {
      LAST.setRelease(this, t);
    }

    void raiseLast(long t) {
      if (t > last) {
        LAST.setRelease(this, t);
      }
    }

    /** Tokens at origin-relative time {@code tt} (never before the last granted change). */
    double tokensAt(long word, double tt) {
      if (rate == INF) {
        return burst;
      }
      double w = Double.longBitsToDouble(word);
      if (rate == 0) {
        return Math.min(w, burst);
      }
      // The same arithmetic as tokensForNanos, so whole tokens stay whole.
      return Math.min((tt - w) * rate / NANOS_PER_SECOND, burst);
    }

    /** The word that says "{@code tokens} at origin-relative time {@code tt}". */
    long word(double tokens, double tt) {
      if (rate == 0 || rate == INF) {
        return Double.doubleToRawLongBits(tokens);
      }
      return Double.doubleToRawLongBits(tt - tokens * NANOS_PER_SECOND / rate);
    }
  }
}
