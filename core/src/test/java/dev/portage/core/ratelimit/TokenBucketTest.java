package dev.portage.core.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.portage.core.time.FakeClock;
import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class TokenBucketTest {

  private static final long MS = 1_000_000L;

  // ---- The table: each case is a bucket and a script of steps with their expected outcomes. ----

  /** What a step sees: the clock, a skew that lets the ticker run backwards, the bucket, named reservations. */
  private static final class Ctx {
    final FakeClock clock = new FakeClock();
    final AtomicLong skew = new AtomicLong();
    final Ticker ticker = () -> clock.nanoTime() + skew.get();
    final Map<String, Reservation> reservations = new HashMap<>();
    TokenBucket bucket;
  }

  @FunctionalInterface
  private interface Step {
    void apply(Ctx c);
  }

  private record Case(String name, double rate, int burst, List<Step> steps) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Case bucket(String name, double rate, int burst, Step... steps) {
    return new Case(name, rate, burst, List.of(steps));
  }

  private static Step advance(long millis) {
    return c -> c.clock.advance(Duration.ofMillis(millis));
  }

  /** The ticker jumps back: readings older than the bucket's last change must count as that change. */
  private static Step back(long millis) {
    return c -> c.skew.addAndGet(-millis * MS);
  }

  private static Step allow(int n, boolean expected) {
    return c -> assertThat(c.bucket.tryAcquire(n)).as("tryAcquire(%d)", n).isEqualTo(expected);
  }

  private static Step tokens(double expected) {
    return c -> assertThat(c.bucket.tokens()).as("tokens()").isCloseTo(expected, within(1e-9));
  }

  private static Step reserve(String label, int n, long delayMillis) {
    return c -> {
      Reservation r = c.bucket.reserve(n);
      assertThat(r.ok()).as("reserve(%d).ok()", n).isTrue();
      assertThat(r.delayNanos()).as("reserve(%d).delay", n).isEqualTo(delayMillis * MS);
      c.reservations.put(label, r);
    };
  }

  private static Step reserveRefused(int n) {
    return c -> {
      Reservation r = c.bucket.reserve(n);
      assertThat(r.ok()).as("reserve(%d).ok()", n).isFalse();
      assertThat(r.delayNanos()).isEqualTo(Long.MAX_VALUE);
      r.cancel(); // a refused reservation took nothing, so cancelling gives nothing back
    };
  }

  private static Step delay(String label, long millis) {
    return c -> assertThat(c.reservations.get(label).delay()).isEqualTo(Duration.ofMillis(millis));
  }

  private static Step cancel(String label) {
    return c -> c.reservations.get(label).cancel();
  }

  private static Step setRate(double rate) {
    return c -> {
      c.bucket.setRate(rate);
      assertThat(c.bucket.rate()).isEqualTo(rate);
    };
  }

  private static Step setBurst(int burst) {
    return c -> {
      c.bucket.setBurst(burst);
      assertThat(c.bucket.burst()).isEqualTo(burst);
    };
  }

  static Stream<Case> cases() {
    return Stream.of(
        bucket("starts full", 10, 5,
            tokens(5), allow(5, true), allow(1, false), tokens(0)),
        bucket("refills at the rate", 10, 5,
            allow(5, true), advance(100), tokens(1), allow(1, true), allow(1, false),
            advance(250), tokens(2.5), allow(2, true), allow(1, false), tokens(0.5)),
        bucket("refill is capped at the burst", 10, 3,
            allow(3, true), advance(10_000), tokens(3), allow(3, true), tokens(0)),
        bucket("partial tokens do not grant a whole one", 4, 1,
            allow(1, true), advance(249), allow(1, false), advance(1), allow(1, true)),
        bucket("a reservation goes into debt and reports its delay", 10, 2,
            reserve("a", 2, 0), reserve("b", 2, 200), tokens(-2),
            advance(100), delay("b", 100), tokens(-1), allow(1, false),
            advance(100), delay("b", 0), tokens(0), allow(1, false),
            advance(100), allow(1, true)),
        bucket("debt accumulates across reservations", 10, 2,
            allow(2, true), reserve("a", 1, 100), reserve("b", 2, 300), tokens(-3),
            advance(150), delay("a", 0), delay("b", 150)),
        bucket("n above the burst is refused and takes nothing", 10, 2,
            reserveRefused(3), allow(3, false), tokens(2), allow(0, true), allow(2, true)),
        bucket("n of 0 is allowed while not in debt", 10, 1,
            allow(0, true), allow(1, true), allow(0, true), reserve("a", 1, 100), allow(0, false)),
        bucket("cancel gives the tokens back", 10, 2,
            allow(2, true), reserve("a", 2, 200), tokens(-2), cancel("a"), tokens(0),
            reserve("b", 1, 100)),
        bucket("cancel keeps the tokens later reservations counted on", 10, 3,
            allow(3, true), reserve("a", 2, 200), reserve("b", 1, 300), cancel("a"), tokens(-2),
            reserve("c", 1, 300)),
        bucket("cancelling the latest reservation rewinds so an earlier cancel restores all", 10, 3,
            allow(3, true), reserve("a", 1, 100), reserve("b", 2, 300), cancel("b"), tokens(-1),
            cancel("a"), tokens(0)),
        bucket("cancel after the reservation's time does nothing", 10, 2,
            allow(2, true), reserve("a", 1, 100), advance(150), cancel("a"), tokens(0.5)),
        bucket("cancel before the reservation's time gives back while it is due", 10, 2,
            allow(2, true), reserve("a", 1, 100), advance(100), cancel("a"), tokens(1)),
        bucket("cancel twice gives back once", 10, 2,
            allow(2, true), reserve("a", 1, 100), cancel("a"), cancel("a"), tokens(0)),
        bucket("cancel never fills beyond the burst", 10, 2,
            reserve("a", 2, 0), setBurst(1), cancel("a"), tokens(1), allow(2, false)),
        bucket("INF allows everything and ignores the burst", TokenBucket.INF, 0,
            allow(1_000_000, true), reserve("a", 1_000, 0), tokens(TokenBucket.INF), cancel("a"),
            allow(1, true)),
        bucket("zero rate spends the burst once and never refills", 0, 3,
            allow(2, true), advance(3_600_000), tokens(1), allow(2, false), reserveRefused(2),
            reserve("a", 1, 0), tokens(0), reserveRefused(1), cancel("a"), tokens(1), allow(1, true),
            advance(3_600_000), allow(1, false), tokens(0)),
        bucket("zero rate with zero burst refuses everything but n = 0", 0, 0,
            allow(1, false), allow(0, true), reserveRefused(1)),
        bucket("time going backwards neither adds nor removes tokens", 10, 5,
            allow(5, true), advance(100), allow(1, true), back(50), tokens(0), allow(1, false),
            advance(50), tokens(0), advance(100), tokens(1), allow(1, true)),
        bucket("a reservation made while time ran backwards counts from the last change", 10, 1,
            allow(1, true), advance(100), reserve("a", 1, 0), back(100), reserve("b", 1, 200),
            tokens(-1)),
        bucket("setRate keeps accumulated tokens and refills at the new rate", 10, 10,
            allow(10, true), advance(500), setRate(2), tokens(5), advance(500), tokens(6),
            setRate(0), advance(10_000), tokens(6), setRate(TokenBucket.INF), allow(100, true),
            tokens(TokenBucket.INF), setRate(1), tokens(10), allow(10, true), allow(1, false)),
        bucket("setRate reprices debt", 10, 2,
            allow(2, true), reserve("a", 1, 100), setRate(1), allow(1, false), advance(999),
            allow(1, false), advance(1), tokens(0), advance(1_000), allow(1, true)),
        bucket("setBurst raises and lowers the cap", 10, 2,
            advance(1_000), tokens(2), setBurst(5), tokens(2), advance(1_000), tokens(5),
            setBurst(1), tokens(1), allow(2, false), allow(1, true), tokens(0)),
        bucket("a take while a reservation is pending records Go's lastEvent, so cancel restores all", 10, 3,
            allow(3, true), reserve("a", 1, 100), setRate(100), advance(20), tokens(1), allow(1, true),
            cancel("a"), tokens(1), reserve("b", 2, 10)),
        bucket("setBurst lets a larger reservation through", 10, 1,
            reserveRefused(3), setBurst(3), reserve("a", 3, 200), tokens(-2)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void followsGoRateSemantics(Case tc) {
    Ctx c = new Ctx();
    c.bucket = new TokenBucket(tc.rate(), tc.burst(), c.ticker);
    assertThat(c.bucket.rate()).isEqualTo(tc.rate());
    assertThat(c.bucket.burst()).isEqualTo(tc.burst());
    for (Step step : tc.steps()) {
      step.apply(c);
    }
  }

  // ---- Blocking acquire with an injected sleeper that advances the fake clock. ----

  private final FakeClock clock = new FakeClock();
  private final List<Long> slept = new ArrayList<>();
  private final Sleeper fakeSleeper = nanos -> {
    slept.add(nanos);
    clock.advance(Duration.ofNanos(nanos));
  };

  @Test
  void acquireTakesAvailableTokensWithoutSleeping() throws InterruptedException {
    TokenBucket bucket = new TokenBucket(10, 2, clock, fakeSleeper);
    assertThat(bucket.acquire(2, Duration.ZERO)).isTrue();
    assertThat(slept).isEmpty();
    assertThat(bucket.tokens()).isZero();
  }

  @Test
  void acquireWaitsExactlyTheReservationDelay() throws InterruptedException {
    TokenBucket bucket = new TokenBucket(10, 2, clock, fakeSleeper);
    bucket.tryAcquire(2);
    clock.advance(Duration.ofMillis(25));

    assertThat(bucket.acquire(2, Duration.ofSeconds(1))).isTrue();

    assertThat(slept).containsExactly(Duration.ofMillis(175).toNanos());
    assertThat(bucket.tokens()).isCloseTo(0, within(1e-9));
  }

  @Test
  void acquireFailsFastWhenTheDeadlineIsTooNear() throws InterruptedException {
    TokenBucket bucket = new TokenBucket(10, 2, clock, fakeSleeper);
    bucket.tryAcquire(2);

    assertThat(bucket.acquire(1, Duration.ofMillis(99))).isFalse();

    assertThat(slept).isEmpty();
    assertThat(bucket.tokens()).as("a refused wait takes nothing").isZero();
    assertThat(bucket.acquire(1, Duration.ofMillis(100))).isTrue();
    assertThat(slept).containsExactly(Duration.ofMillis(100).toNanos());
  }

  @Test
  void acquireRejectsMoreThanTheBurst() {
    TokenBucket bucket = new TokenBucket(10, 2, clock, fakeSleeper);
    assertThatThrownBy(() -> bucket.acquire(3, Duration.ofHours(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("n: 3 (expected: <= burst 2)");
    assertThat(slept).isEmpty();
    assertThat(bucket.tokens()).isEqualTo(2);
  }

  @Test
  void acquireUnderInfIgnoresTheBurst() throws InterruptedException {
    TokenBucket bucket = new TokenBucket(TokenBucket.INF, 0, clock, fakeSleeper);
    assertThat(bucket.acquire(1_000, Duration.ZERO)).isTrue();
    assertThat(slept).isEmpty();
  }

  @Test
  void acquireAtZeroRateFailsOnceTheBurstIsSpent() throws InterruptedException {
    TokenBucket bucket = new TokenBucket(0, 1, clock, fakeSleeper);
    assertThat(bucket.acquire(1, Duration.ofHours(1))).isTrue();
    assertThat(bucket.acquire(1, Duration.ofDays(365_000))).isFalse();
    assertThat(slept).isEmpty();
  }

  @Test
  void interruptedAcquireCancelsItsReservation() {
    Sleeper interrupted = nanos -> {
      slept.add(nanos);
      throw new InterruptedException();
    };
    TokenBucket bucket = new TokenBucket(10, 2, clock, interrupted);
    bucket.tryAcquire(2);

    assertThatThrownBy(() -> bucket.acquire(2, Duration.ofSeconds(1)))
        .isInstanceOf(InterruptedException.class);

    assertThat(slept).containsExactly(Duration.ofMillis(200).toNanos());
    assertThat(bucket.tokens()).as("tokens given back").isZero();
    assertThat(bucket.reserve(1).delay()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void acquireOnAnInterruptedThreadThrowsAndTakesNothing() {
    TokenBucket bucket = new TokenBucket(10, 2, clock, fakeSleeper);
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> bucket.acquire(1, Duration.ofSeconds(1)))
        .isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).as("the flag is consumed, as by any InterruptedException").isFalse();
    assertThat(bucket.tokens()).isEqualTo(2);
  }

  @Test
  void parkingSleeperStopsOnInterrupt() {
    Sleeper parking = Sleeper.parking(Ticker.system());
    Thread.currentThread().interrupt();
    // parkNanos returns at once for an interrupted thread, so this does not sleep.
    assertThatThrownBy(() -> parking.sleepNanos(Duration.ofHours(1).toNanos()))
        .isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();
  }

  @Test
  void parkingSleeperReturnsAtOnceForNoDelay() throws InterruptedException {
    Sleeper.parking(clock).sleepNanos(0);
    Sleeper.parking(clock).sleepNanos(-5);
  }

  // ---- Conversions and validation. ----

  @Test
  void everyTurnsAnIntervalIntoARate() {
    assertThat(TokenBucket.every(Duration.ofMillis(250))).isEqualTo(4.0);
    assertThat(TokenBucket.every(Duration.ofSeconds(3))).isCloseTo(1.0 / 3, within(1e-15));
    assertThat(TokenBucket.every(Duration.ZERO)).isEqualTo(TokenBucket.INF);
    assertThat(TokenBucket.every(Duration.ofSeconds(Long.MAX_VALUE))).isPositive();
    assertThatThrownBy(() -> TokenBucket.every(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval: PT-0.001S (expected: >= 0)");
  }

  @Test
  void rejectsBadArguments() {
    assertThatThrownBy(() -> new TokenBucket(-1, 1, clock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rate: -1.0 (expected: >= 0 or TokenBucket.INF)");
    assertThatThrownBy(() -> new TokenBucket(Double.NaN, 1, clock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rate: NaN");
    assertThatThrownBy(() -> new TokenBucket(1, -1, clock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("burst: -1 (expected: >= 0)");
    assertThatThrownBy(() -> new TokenBucket(1, 1, null)).isInstanceOf(NullPointerException.class);

    TokenBucket bucket = new TokenBucket(1, 1, clock);
    assertThatThrownBy(() -> bucket.tryAcquire(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("n: -1 (expected: >= 0)");
    assertThatThrownBy(() -> bucket.reserve(-2)).hasMessage("n: -2 (expected: >= 0)");
    assertThatThrownBy(() -> bucket.acquire(1, Duration.ofMillis(-1)))
        .hasMessage("timeout: PT-0.001S (expected: >= 0)");
    assertThatThrownBy(() -> bucket.setRate(-0.5)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> bucket.setBurst(-3)).hasMessage("burst: -3 (expected: >= 0)");
    assertThat(bucket.tokens()).as("failed calls change nothing").isEqualTo(1);
  }

  @Test
  void waitsBeyondTheNanosecondRangeCountAsNever() {
    TokenBucket bucket = new TokenBucket(1e-12, 1, clock); // one token per ~31,700 years
    bucket.tryAcquire();
    assertThat(bucket.reserve(1).ok()).isFalse();
    assertThat(bucket.tokens()).isZero();
    TokenBucket slow = new TokenBucket(1e-6, 1, clock); // one token per ~11.6 days
    slow.tryAcquire();
    assertThat(slow.reserve(1, Duration.ofDays(1).toNanos()).ok()).isFalse();
    assertThat(slow.reserve(1).delay()).isEqualTo(Duration.ofSeconds(1_000_000));
  }
}
