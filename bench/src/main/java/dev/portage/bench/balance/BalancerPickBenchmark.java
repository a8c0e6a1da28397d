package dev.portage.bench.balance;

import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.Pick;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one pick plus its completion, for round robin and P2C peak-EWMA over 3, 100 and 10 000
 * endpoints. Each pick is completed at once with a fixed RTT so in-flight counts and estimates stay
 * bounded. One endpoint in ten is unhealthy in the {@code partlyDown} variants, to cost the skips.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BalancerPickBenchmark {

  private static final long RTT_NANOS = 5_000_000;

  @Param({"3", "100", "10000"})
  public int endpoints;

  @Param({"roundRobin", "peakEwmaP2c"})
  public String balancer;

  @Param({"allUp", "partlyDown"})
  public String health;

  private Balancer<InetSocketAddress> subject;

  @Setup
  public void setUp() {
    subject = switch (balancer) {
      case "roundRobin" -> Balancer.roundRobin();
      case "peakEwmaP2c" -> Balancer.peakEwmaP2c(Ticker.system(), ThreadLocalRandom.current());
      default -> throw new IllegalArgumentException("balancer: " + balancer);
    };
    List<Endpoint<InetSocketAddress>> list = new ArrayList<>(endpoints);
    for (int i = 0; i < endpoints; i++) {
      Endpoint<InetSocketAddress> e = Endpoint.of(
          "ep-" + i, InetSocketAddress.createUnresolved("10.0." + (i / 250) + "." + (i % 250), 8080));
      // Every tenth endpoint is down; with 3 endpoints, the first one.
      e.setHealthy(!health.equals("partlyDown") || i % 10 != 0);
      list.add(e);
    }
    subject.update(list);
  }

  @Benchmark
  public InetSocketAddress pickAndComplete() {
    Pick<InetSocketAddress> pick = subject.pick();
    pick.complete(RTT_NANOS);
    return pick.target();
  }
}
