package dev.portage.core.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BoundedFrequencyRunnerTest {

  private static final Duration MIN = Duration.ofSeconds(1);
  private static final Duration MAX = Duration.ofSeconds(10);

  private final FakeClock clock = new FakeClock();
  /** Fake-clock times (ms) at which fn ran. */
  private final List<Long> ranAt = new ArrayList<>();
  private Consumer<BoundedFrequencyRunner> body = r -> {};
  private BoundedFrequencyRunner runner;

  @AfterEach
  void closeRunner() {
    if (runner != null) {
      runner.close();
    }
  }

  private BoundedFrequencyRunner start(Duration min, Duration max, int burst) {
    runner = new BoundedFrequencyRunner("test-sync", this::fn, min, max, burst, clock.timeSource());
    runner.start();
    return runner;
  }

  private void fn() {
    ranAt.add(Duration.ofNanos(clock.nanoTime()).toMillis());
    body.accept(runner);
  }

  private void advanceMillis(long ms) {
    clock.advance(Duration.ofMillis(ms));
  }

  @Test
  void manyRequestsCoalesceIntoOneRun() {
    start(MIN, MAX, 2);
    for (int i = 0; i < 50; i++) {
      runner.run();
    }
    clock.runDue();
    assertThat(ranAt).containsExactly(0L);
    assertThat(runner.runs()).isEqualTo(1);
  }

  @Test
  void requestsInsideTheMinIntervalWaitForIt() {
    start(MIN, MAX, 1);
    runner.run();
    clock.runDue();
    runner.run();
    clock.runDue();
    assertThat(ranAt).containsExactly(0L);

    advanceMillis(300);
    runner.run(); // still limited: coalesces with the deferred one
    advanceMillis(699);
    assertThat(ranAt).containsExactly(0L);
    advanceMillis(1);
    assertThat(ranAt).containsExactly(0L, 1000L);

    advanceMillis(5_000);
    assertThat(ranAt).as("a satisfied request does not run again").containsExactly(0L, 1000L);
  }

  @Test
  void burstRunsGoBackToBackThenTheMinIntervalApplies() {
    start(MIN, MAX, 3);
    for (int i = 0; i < 4; i++) {
      runner.run();
      clock.runDue();
    }
    assertThat(ranAt).containsExactly(0L, 0L, 0L);
    advanceMillis(1_000);
    assertThat(ranAt).containsExactly(0L, 0L, 0L, 1000L);
    runner.run();
    advanceMillis(1_000);
    assertThat(ranAt).containsExactly(0L, 0L, 0L, 1000L, 2000L);
  }

  @Test
  void maxIntervalRunsFnWithoutRequests() {
    start(MIN, MAX, 1);
    advanceMillis(9_999);
    assertThat(ranAt).isEmpty();
    advanceMillis(1);
    assertThat(ranAt).containsExactly(10_000L);
    advanceMillis(3_000);
    runner.run();
    clock.runDue();
    advanceMillis(10_000);
    assertThat(ranAt).as("a run restarts the max-interval timer").containsExactly(10_000L, 13_000L, 23_000L);
  }

  @Test
  void requestsBeforeStartRunAtStart() {
    runner = new BoundedFrequencyRunner("test-sync", this::fn, MIN, MAX, 1, clock.timeSource());
    runner.run();
    clock.advance(Duration.ofSeconds(30));
    assertThat(ranAt).isEmpty();
    runner.start();
    clock.runDue();
    assertThat(ranAt).containsExactly(30_000L);
    assertThatThrownBy(runner::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("test-sync: already started");
  }

  @Test
  void earliestRetryWins() {
    start(MIN, MAX, 1);
    runner.retryAfter(Duration.ofSeconds(5));
    runner.retryAfter(Duration.ofSeconds(3));
    runner.retryAfter(Duration.ofSeconds(4));
    clock.runDue();
    advanceMillis(2_999);
    assertThat(ranAt).isEmpty();
    advanceMillis(1);
    assertThat(ranAt).containsExactly(3_000L);
    advanceMillis(2_000);
    assertThat(ranAt).as("the later retries were satisfied by that run").containsExactly(3_000L);
  }

  @Test
  void retryAfterFromInsideFnSchedulesTheNextRun() {
    AtomicInteger calls = new AtomicInteger();
    body = r -> {
      if (calls.incrementAndGet() == 1) {
        r.retryAfter(Duration.ofSeconds(2)); // a partial failure: try again soon
      }
    };
    start(MIN, MAX, 1);
    runner.run();
    clock.runDue();
    advanceMillis(2_000);
    assertThat(ranAt).containsExactly(0L, 2_000L);
    advanceMillis(9_999);
    assertThat(ranAt).containsExactly(0L, 2_000L);
    advanceMillis(1);
    assertThat(ranAt).containsExactly(0L, 2_000L, 12_000L);
  }

  @Test
  void retrySoonerThanTheMinIntervalWaitsForIt() {
    body = r -> r.retryAfter(Duration.ofMillis(100));
    start(MIN, MAX, 1);
    runner.run();
    clock.runDue();
    advanceMillis(2_500);
    assertThat(ranAt).containsExactly(0L, 1_000L, 2_000L);
  }

  @Test
  void retryLaterThanTheMaxIntervalLeavesThePeriodicRun() {
    start(MIN, MAX, 1);
    runner.retryAfter(Duration.ofSeconds(60));
    advanceMillis(10_000);
    assertThat(ranAt).containsExactly(10_000L);
  }

  @Test
  void failingFnIsCountedAndTheLoopGoesOn() {
    AtomicInteger calls = new AtomicInteger();
    body = r -> {
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("sync failed");
      }
    };
    start(Duration.ZERO, MAX, 1);
    runner.run();
    clock.runDue();
    assertThat(runner.failures()).isEqualTo(1);
    assertThat(runner.runs()).isEqualTo(1);

    runner.run();
    clock.runDue();
    advanceMillis(10_000);
    assertThat(ranAt).containsExactly(0L, 0L, 10_000L);
    assertThat(runner.runs()).isEqualTo(3);
    assertThat(runner.failures()).isEqualTo(1);
  }

  @Test
  void zeroMinIntervalMeansNoRateLimit() {
    start(Duration.ZERO, MAX, 1);
    for (int i = 0; i < 5; i++) {
      runner.run();
      clock.runDue();
    }
    assertThat(ranAt).containsExactly(0L, 0L, 0L, 0L, 0L);
  }

  @Test
  void closeStopsRunsAndCancelsTimers() {
    start(MIN, MAX, 1);
    runner.run();
    runner.retryAfter(Duration.ofSeconds(1));
    runner.close();
    clock.advance(Duration.ofMinutes(5));
    assertThat(ranAt).isEmpty();
    assertThat(clock.pendingTasks()).isZero();

    runner.run();
    runner.retryAfter(Duration.ZERO);
    runner.close(); // idempotent
    clock.advance(Duration.ofMinutes(5));
    assertThat(ranAt).isEmpty();
    assertThat(clock.pendingTasks()).isZero();
    assertThatThrownBy(runner::start).isInstanceOf(IllegalStateException.class).hasMessage("test-sync: closed");
  }

  @Test
  void closeFromInsideFnStopsTheLoop() {
    body = BoundedFrequencyRunner::close;
    start(Duration.ZERO, MAX, 1);
    runner.run();
    clock.runDue();
    runner.run();
    clock.advance(Duration.ofMinutes(5));
    assertThat(ranAt).containsExactly(0L);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void closeWaitsForARunInProgress() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean finished = new AtomicBoolean();
    body = r -> {
      entered.countDown();
      awaitUninterruptibly(release);
      finished.set(true);
    };
    start(Duration.ZERO, MAX, 1);
    runner.run();
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      Future<?> running = threads.submit(clock::runDue);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      Future<Boolean> closing = threads.submit(() -> {
        runner.close();
        return finished.get();
      });
      release.countDown();
      assertThat(closing.get(10, TimeUnit.SECONDS)).as("fn had finished when close returned").isTrue();
      running.get(10, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
      assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void fnNeverRunsConcurrentlyWithItselfOnAMultiThreadedScheduler() throws Exception {
    ScheduledExecutorService pool = Executors.newScheduledThreadPool(4);
    ExecutorService callers = Executors.newFixedThreadPool(4);
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicBoolean lastRequestMade = new AtomicBoolean();
    CountDownLatch ranAfterLastRequest = new CountDownLatch(1);
    try (BoundedFrequencyRunner r = new BoundedFrequencyRunner("race", () -> {
          if (inFlight.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
          }
          boolean last = lastRequestMade.get();
          inFlight.decrementAndGet();
          if (last) {
            ranAfterLastRequest.countDown();
          }
        }, Duration.ZERO, Duration.ofHours(1), 1, TimeSource.system(pool))) {
      r.start();
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        futures.add(callers.submit(() -> {
          for (int i = 0; i < 20_000; i++) {
            r.run();
            if (i % 100 == 0) {
              r.retryAfter(Duration.ZERO);
            }
          }
        }));
      }
      for (Future<?> f : futures) {
        f.get(10, TimeUnit.SECONDS);
      }
      lastRequestMade.set(true);
      r.run(); // guarantees a run that starts after this point
      assertThat(ranAfterLastRequest.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(overlaps).hasValue(0);
      assertThat(r.runs()).isPositive();
    } finally {
      callers.shutdownNow();
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void rejectsBadConfiguration() {
    Runnable noop = () -> {};
    TimeSource time = clock.timeSource();
    assertThatThrownBy(() -> new BoundedFrequencyRunner("s", noop, Duration.ofSeconds(3), Duration.ofSeconds(1), 1, time))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxInterval: PT1S (expected: >= minInterval PT3S)");
    assertThatThrownBy(() -> new BoundedFrequencyRunner("s", noop, Duration.ofSeconds(-1), MAX, 1, time))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minInterval: PT-1S (expected: >= 0)");
    assertThatThrownBy(() -> new BoundedFrequencyRunner("s", noop, Duration.ZERO, Duration.ZERO, 1, time))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxInterval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> new BoundedFrequencyRunner("s", noop, MIN, MAX, 0, time))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("burstRuns: 0 (expected: >= 1)");
    assertThatThrownBy(() -> new BoundedFrequencyRunner("s", null, MIN, MAX, 1, time))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> new BoundedFrequencyRunner(null, noop, MIN, MAX, 1, time))
        .isInstanceOf(NullPointerException.class);

    BoundedFrequencyRunner ok = new BoundedFrequencyRunner("s", noop, MIN, MIN, 1, time);
    assertThatThrownBy(() -> ok.retryAfter(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("delay: PT-0.001S (expected: >= 0)");
    ok.close();
    assertThat(clock.pendingTasks()).isZero();
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("latch not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
