package dev.portage.proxy.mesh;

import dev.portage.core.time.Ticker;
import java.time.Duration;

/**
 * A Finagle/tower retry budget: every original request deposits one token, every retry withdraws
 * {@code 1 / ratio} tokens, and {@code minRetriesPerSecond × ttl} tokens' worth of retries are
 * always allowed on top. Deposits and withdrawals expire after {@code ttl}, counted in ten slots of {@code ttl / 10}
 * as tower does. So with ratio 0.2 one retry is allowed per 5 requests. Thread-safe (one lock; the
 * work inside is constant time).
 */
final class RetryBudget {

  private static final int SLOTS = 10;
  // Tokens are scaled so fractional withdrawals (ratio above 1) stay exact integers.
  private static final long SCALE = 1000;

  private final Ticker ticker;
  private final long slotNanos;
  private final long deposit;
  private final long withdraw;
  private final long reserve;
  private final long[] slots = new long[SLOTS];
  private long slotStart; // ticker value where the current slot began
  private int current;

  /**
   * @param ratio retries per request, {@code [0, 1000]}
   * @param ttl deposit lifetime, {@code [1 s, 60 s]}
   */
  RetryBudget(Ticker ticker, double ratio, int minRetriesPerSecond, Duration ttl) {
    if (!valid(ratio, ttl)) {
      throw new IllegalArgumentException(
          "retry budget: ratio " + ratio + ", ttl " + ttl + " (expected: ratio 0..1000, ttl 1s..60s)");
    }
    this.ticker = ticker;
    this.slotNanos = ttl.toNanos() / SLOTS;
    this.deposit = ratio == 0 ? 0 : SCALE;
    this.withdraw = ratio == 0 ? SCALE : Math.max(1, Math.round(SCALE / ratio));
    this.reserve = (long) minRetriesPerSecond * ttl.toSeconds() * withdraw;
    this.slotStart = ticker.nanoTime();
  }

  /** Whether the settings make a usable budget (otherwise routes of the profile are not retried). */
  static boolean valid(double ratio, Duration ttl) {
    return ratio >= 0 && ratio <= 1000
        && ttl.compareTo(Duration.ofSeconds(1)) >= 0 && ttl.compareTo(Duration.ofSeconds(60)) <= 0;
  }

  /** Counts an original request. */
  synchronized void deposit() {
    advance();
    slots[current] += deposit;
  }

  /** Takes one retry's worth of tokens if the budget (reserve + live deposits − live withdrawals) has them. */
  synchronized boolean tryWithdraw() {
    advance();
    long balance = reserve;
    for (long s : slots) {
      balance += s;
    }
    if (balance < withdraw) {
      return false;
    }
    // Charged to the current slot (which may go negative), so it expires after a ttl like a deposit.
    slots[current] -= withdraw;
    return true;
  }

  /** How many retries the budget would allow now (reserve + live deposits − live withdrawals). */
  synchronized long availableRetries() {
    advance();
    long balance = reserve;
    for (long s : slots) {
      balance += s;
    }
    return Math.max(0, balance / withdraw);
  }

  private void advance() {
    long now = ticker.nanoTime();
    long elapsedSlots = (now - slotStart) / slotNanos;
    if (elapsedSlots <= 0) {
      return;
    }
    for (long i = 0; i < Math.min(elapsedSlots, SLOTS); i++) {
      current = (current + 1) % SLOTS;
      slots[current] = 0;
    }
    slotStart += elapsedSlots * slotNanos;
  }
}
