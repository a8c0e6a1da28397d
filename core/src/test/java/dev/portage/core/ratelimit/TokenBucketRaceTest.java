package dev.portage.core.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Threads hammer one bucket while the test moves a fake clock in steps. A barrier separates the
 * steps, so within a step the clock stands still and every thread tries until the bucket refuses it.
 * Some runs add a thread that, during every step, goes through the bucket's locked paths (rate and
 * burst changes that seal the lock-free state word, reservations) while the others take lock-free.
 */
class TokenBucketRaceTest {

  private static final int THREADS = 4;
  private static final int STEPS = 400;
  private static final Duration STEP = Duration.ofNanos(1_370_000); // 1.37 ms
  private static final int SIDELINE_CALLS = 8;

  @Test
  void concurrentCallersNeverGetMoreThanBurstPlusRateTimesTime() throws Exception {
    FakeClock clock = new FakeClock();
    double rate = 7_300; // ~10.001 tokens per step: the fractions must carry over between steps
    int burst = 25;
    TokenBucket bucket = new TokenBucket(rate, burst, clock);

    long granted = hammer(clock, bucket, 1);

    double elapsedSeconds = STEP.toNanos() * (double) STEPS / 1e9;
    double ceiling = burst + rate * elapsedSeconds;
    assertThat((double) granted).isLessThanOrEqualTo(ceiling);
    assertThat((double) granted).as("with callers always waiting, almost every token is used")
        .isGreaterThanOrEqualTo(ceiling - 1);
  }

  @Test
  void concurrentMultiTokenCallersStayWithinTheBudget() throws Exception {
    FakeClock clock = new FakeClock();
    double rate = 2_000;
    int burst = 9;
    TokenBucket bucket = new TokenBucket(rate, burst, clock);

    long granted = hammer(clock, bucket, 3);

    double ceiling = burst + rate * (STEP.toNanos() * (double) STEPS / 1e9);
    assertThat((double) granted).isLessThanOrEqualTo(ceiling);
    // Requests of 3 can leave up to 2 tokens unused at the end.
    assertThat((double) granted).isGreaterThanOrEqualTo(ceiling - 3);
  }

  @Test
  void rateAndBurstChangesDuringConcurrentTakesNeitherLoseNorAddTokens() throws Exception {
    FakeClock clock = new FakeClock();
    double rate = 7_300;
    int burst = 25;
    TokenBucket bucket = new TokenBucket(rate, burst, clock);

    // Same values: each change seals the state word and installs an equal one under the takers.
    long granted = hammer(clock, bucket, 1, () -> {
      bucket.setRate(rate);
      bucket.setBurst(burst);
      return 0;
    });

    double ceiling = burst + rate * (STEP.toNanos() * (double) STEPS / 1e9);
    assertThat((double) granted).isLessThanOrEqualTo(ceiling);
    assertThat((double) granted).isGreaterThanOrEqualTo(ceiling - 1);
    assertThat(bucket.rate()).isEqualTo(rate);
    assertThat(bucket.burst()).isEqualTo(burst);
  }

  @Test
  void lockedReservationsAndLockFreeTakesShareOneBudget() throws Exception {
    FakeClock clock = new FakeClock();
    double rate = 7_300;
    int burst = 25;
    TokenBucket bucket = new TokenBucket(rate, burst, clock);

    // reserve(1, 0) takes the lock and competes with the lock-free takers for the same word.
    long granted = hammer(clock, bucket, 1, () -> bucket.reserve(1, 0).ok() ? 1 : 0);

    double ceiling = burst + rate * (STEP.toNanos() * (double) STEPS / 1e9);
    assertThat((double) granted).isLessThanOrEqualTo(ceiling);
    assertThat((double) granted).isGreaterThanOrEqualTo(ceiling - 1);
  }

  /** Returns the tokens granted in total over {@link #STEPS} steps to {@link #THREADS} threads. */
  private static long hammer(FakeClock clock, TokenBucket bucket, int n) throws Exception {
    return hammer(clock, bucket, n, null);
  }

  /**
   * As above; if {@code sideline} is not null, one more thread calls it {@link #SIDELINE_CALLS}
   * times per step while the others take, and the tokens it returns count as granted.
   */
  private static long hammer(FakeClock clock, TokenBucket bucket, int n, Callable<Integer> sideline)
      throws Exception {
    AtomicLong granted = new AtomicLong();
    int parties = THREADS + (sideline != null ? 1 : 0);
    // Party 0 is this thread: it advances the clock between two barrier trips.
    CyclicBarrier stepStart = new CyclicBarrier(parties + 1);
    CyclicBarrier stepEnd = new CyclicBarrier(parties + 1);
    ExecutorService pool = Executors.newFixedThreadPool(parties);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        workers.add(pool.submit(() -> {
          for (int step = 0; step <= STEPS; step++) {
            stepStart.await(10, TimeUnit.SECONDS);
            // The clock stands still during a step, so the first refusal means the bucket is dry.
            while (bucket.tryAcquire(n)) {
              granted.addAndGet(n);
            }
            stepEnd.await(10, TimeUnit.SECONDS);
          }
          return null;
        }));
      }
      if (sideline != null) {
        workers.add(pool.submit(() -> {
          for (int step = 0; step <= STEPS; step++) {
            stepStart.await(10, TimeUnit.SECONDS);
            for (int i = 0; i < SIDELINE_CALLS; i++) {
              granted.addAndGet(sideline.call());
            }
            stepEnd.await(10, TimeUnit.SECONDS);
          }
          return null;
        }));
      }
      for (int step = 0; step <= STEPS; step++) {
        if (step > 0) {
          clock.advance(STEP);
        }
        stepStart.await(10, TimeUnit.SECONDS);
        stepEnd.await(10, TimeUnit.SECONDS);
      }
      for (Future<?> w : workers) {
        w.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(bucket.tryAcquire(n)).isFalse();
    return granted.get();
  }
}
