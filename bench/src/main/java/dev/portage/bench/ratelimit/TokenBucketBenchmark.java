package dev.portage.bench.ratelimit;

import com.google.common.util.concurrent.RateLimiter;
import dev.portage.core.ratelimit.TokenBucket;
import dev.portage.core.time.Ticker;
import io.github.bucket4j.Bucket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Non-blocking acquire of one token: Portage's {@link TokenBucket} against Guava's {@link
 * RateLimiter} and Bucket4j's lock-free local bucket, on the path where a token is always there
 * ({@code allowed*}, a rate far above what a core can take) and where the bucket is dry ({@code
 * denied*}). Each limiter is shared by all benchmark threads ({@code _t2} = two threads contending).
 * Run with {@code -prof gc} to see the allocation per call.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TokenBucketBenchmark {

  /**
   * One token per nanosecond (Bucket4j's ceiling) with a burst of a billion: far more than any thread
   * can take, so every call succeeds.
   */
  private static final double ALWAYS = 1e9;
  /** One token per ~11.6 days, so after the first token every call fails. */
  private static final double NEVER = 1e-6;

  private TokenBucket portageAllowed;
  private RateLimiter guavaAllowed;
  private Bucket bucket4jAllowed;

  private TokenBucket portageDenied;
  private RateLimiter guavaDenied;
  private Bucket bucket4jDenied;

  @Setup
  public void setUp() {
    portageAllowed = new TokenBucket(ALWAYS, 1_000_000_000, Ticker.system());
    guavaAllowed = RateLimiter.create(ALWAYS);
    bucket4jAllowed = Bucket.builder()
        .addLimit(limit -> limit.capacity(1_000_000_000L).refillGreedy(1_000_000_000L, Duration.ofSeconds(1)))
        .build();

    portageDenied = new TokenBucket(NEVER, 1, Ticker.system());
    guavaDenied = RateLimiter.create(NEVER);
    bucket4jDenied = Bucket.builder()
        .addLimit(limit -> limit.capacity(1).refillGreedy(1, Duration.ofDays(365)))
        .build();
    // Spend the one token each dry bucket starts with (Guava grants the first call on credit).
    requireTrue(portageDenied.tryAcquire() && guavaDenied.tryAcquire() && bucket4jDenied.tryConsume(1));
    requireTrue(!portageDenied.tryAcquire() && !guavaDenied.tryAcquire() && !bucket4jDenied.tryConsume(1));
  }

  private static void requireTrue(boolean condition) {
    if (!condition) {
      throw new IllegalStateException("benchmark buckets are not in the expected state");
    }
  }

  // ---- One thread. ----

  @Benchmark
  @Threads(1)
  public boolean allowed_portage_t1() {
    return portageAllowed.tryAcquire();
  }

  @Benchmark
  @Threads(1)
  public boolean allowed_guava_t1() {
    return guavaAllowed.tryAcquire();
  }

  @Benchmark
  @Threads(1)
  public boolean allowed_bucket4j_t1() {
    return bucket4jAllowed.tryConsume(1);
  }

  @Benchmark
  @Threads(1)
  public boolean denied_portage_t1() {
    return portageDenied.tryAcquire();
  }

  @Benchmark
  @Threads(1)
  public boolean denied_guava_t1() {
    return guavaDenied.tryAcquire();
  }

  @Benchmark
  @Threads(1)
  public boolean denied_bucket4j_t1() {
    return bucket4jDenied.tryConsume(1);
  }

  // ---- Two threads on the same limiter. ----

  @Benchmark
  @Threads(2)
  public boolean allowed_portage_t2() {
    return portageAllowed.tryAcquire();
  }

  @Benchmark
  @Threads(2)
  public boolean allowed_guava_t2() {
    return guavaAllowed.tryAcquire();
  }

  @Benchmark
  @Threads(2)
  public boolean allowed_bucket4j_t2() {
    return bucket4jAllowed.tryConsume(1);
  }

  @Benchmark
  @Threads(2)
  public boolean denied_portage_t2() {
    return portageDenied.tryAcquire();
  }

  @Benchmark
  @Threads(2)
  public boolean denied_guava_t2() {
    return guavaDenied.tryAcquire();
  }

  @Benchmark
  @Threads(2)
  public boolean denied_bucket4j_t2() {
    return bucket4jDenied.tryConsume(1);
  }
}
