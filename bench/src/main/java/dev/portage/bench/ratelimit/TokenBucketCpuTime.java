package dev.portage.bench.ratelimit;

import com.google.common.util.concurrent.RateLimiter;
import dev.portage.core.ratelimit.TokenBucket;
import dev.portage.core.time.Ticker;
import io.github.bucket4j.Bucket;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.function.BooleanSupplier;

/**
 * The {@link TokenBucketBenchmark} cases measured in thread CPU time instead of wall time, so that a
 * machine loaded by other work (time spent descheduled) does not blur the comparison; the peers run
 * interleaved, round after round, and the median of the rounds is printed with a {@code
 * System.nanoTime()} loop as the floor every limiter pays. Not JMH: one JVM, one shared call site, so
 * read the figures as ratios. Usage: {@code java -cp bench/target/benchmarks.jar
 * dev.portage.bench.ratelimit.TokenBucketCpuTime [callsPerThread [rounds]]}.
 */
public final class TokenBucketCpuTime {

  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  private static volatile boolean sink;

  private TokenBucketCpuTime() {}

  public static void main(String[] args) throws Exception {
    long calls = args.length > 0 ? Long.parseLong(args[0]) : 5_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    Map<String, BooleanSupplier> cases = new LinkedHashMap<>();
    cases.put("nanoTime floor", () -> System.nanoTime() != 0);

    TokenBucket portageAllowed = new TokenBucket(1e9, 1_000_000_000, Ticker.system());
    RateLimiter guavaAllowed = RateLimiter.create(1e9);
    Bucket bucket4jAllowed = Bucket.builder()
        .addLimit(l -> l.capacity(1_000_000_000L).refillGreedy(1_000_000_000L, Duration.ofSeconds(1)))
        .build();
    cases.put("allowed portage", portageAllowed::tryAcquire);
    cases.put("allowed guava", guavaAllowed::tryAcquire);
    cases.put("allowed bucket4j", () -> bucket4jAllowed.tryConsume(1));

    TokenBucket portageDenied = new TokenBucket(1e-6, 1, Ticker.system());
    RateLimiter guavaDenied = RateLimiter.create(1e-6);
    Bucket bucket4jDenied = Bucket.builder()
        .addLimit(l -> l.capacity(1).refillGreedy(1, Duration.ofDays(365)))
        .build();
    if (!(portageDenied.tryAcquire() && guavaDenied.tryAcquire() && bucket4jDenied.tryConsume(1))) {
      throw new IllegalStateException("dry buckets did not grant their first token");
    }
    cases.put("denied portage", portageDenied::tryAcquire);
    cases.put("denied guava", guavaDenied::tryAcquire);
    cases.put("denied bucket4j", () -> bucket4jDenied.tryConsume(1));

    for (int threads : new int[] {1, 2}) {
      Map<String, List<Double>> results = new LinkedHashMap<>();
      for (int round = -1; round < rounds; round++) { // round -1 warms up
        for (Map.Entry<String, BooleanSupplier> c : cases.entrySet()) {
          double ns = cpuNanosPerCall(c.getValue(), threads, round < 0 ? calls / 4 : calls);
          if (round >= 0) {
            results.computeIfAbsent(c.getKey(), k -> new ArrayList<>()).add(ns);
          }
        }
      }
      for (Map.Entry<String, List<Double>> r : results.entrySet()) {
        List<Double> v = new ArrayList<>(r.getValue());
        v.sort(null);
        System.out.printf("t%d %-18s median %6.1f  min %6.1f  max %6.1f  CPU ns/call%n",
            threads, r.getKey(), v.get(v.size() / 2), v.get(0), v.get(v.size() - 1));
      }
    }
  }

  /** CPU time of all threads divided by the calls of all threads. */
  private static double cpuNanosPerCall(BooleanSupplier call, int threads, long callsPerThread)
      throws InterruptedException {
    CyclicBarrier start = new CyclicBarrier(threads);
    long[] cpu = new long[threads];
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      int index = i;
      Thread t = new Thread(() -> {
        try {
          start.await();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        long begin = MX.getCurrentThreadCpuTime();
        boolean s = false;
        for (long k = 0; k < callsPerThread; k++) {
          s ^= call.getAsBoolean();
        }
        cpu[index] = MX.getCurrentThreadCpuTime() - begin;
        sink = s;
      });
      workers.add(t);
      t.start();
    }
    for (Thread t : workers) {
      t.join();
    }
    long total = 0;
    for (long c : cpu) {
      total += c;
    }
    return total / (double) (callsPerThread * threads);
  }
}
