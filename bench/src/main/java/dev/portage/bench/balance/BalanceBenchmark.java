package dev.portage.bench.balance;

import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.Ticker;
import dev.portage.core.time.TimeSource;
import dev.portage.proxy.mesh.Sidecar;
import dev.portage.proxy.mesh.SidecarConfig;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The balancing benchmark of issue #5 ("Beyond Round Robin" shape): N backends with a fixed service
 * delay behind a real Portage {@link Sidecar}, whose endpoints come from a real {@link ControlPlane}
 * (file source, gRPC Destination API on a loopback port); a fixed-rate open-loop load; one backend
 * slowed by a factor for the second half of the measured window. First one unreported healthy run
 * warms the JIT (the sidecar is in this JVM, so the first run would otherwise measure the
 * interpreter). Runs, each on a fresh control
 * plane, sidecar and backends after a healthy warm-up: all healthy with p2c-ewma, slowed with
 * round-robin, slowed with p2c-ewma. Prints a Markdown table with p50/p99/p99.9 and the ratios of
 * the goal.
 *
 * <p>The default service time (50 ms, 500 ms slowed) is long on purpose: on a small machine shared
 * with other work the scheduling jitter alone reaches tens of milliseconds at p99, and a 1 ms
 * service time would measure that jitter rather than the balancer.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.portage.bench.balance.BalanceBenchmark \
 *   [--rate 300] [--duration 30] [--warmup 5] [--jit-warmup 15] [--backends 10] [--delay-ms 50] [--slow-factor 10] \
 *   [--connections 128] [--runs healthy-p2c,slowed-rr,slowed-p2c]
 * </pre>
 */
public final class BalanceBenchmark {

  private static final String AUTHORITY = "bench.default.svc.cluster.local:8080";

  private record Run(String name, SidecarConfig.BalancerKind balancer, boolean slowed) {}

  private record Outcome(Run run, OpenLoopLoad.Result result, long slowHitsSecondHalf, long hitsSecondHalf) {}

  private final Map<String, String> opts;
  private final Ticker ticker = Ticker.system();

  private BalanceBenchmark(Map<String, String> opts) {
    this.opts = opts;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    opts.put("rate", "300");
    opts.put("duration", "30");
    opts.put("warmup", "5");
    opts.put("jit-warmup", "15");
    opts.put("backends", "10");
    opts.put("delay-ms", "50");
    opts.put("slow-factor", "10");
    opts.put("connections", "128");
    opts.put("runs", "healthy-p2c,slowed-rr,slowed-p2c");
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--") || !opts.containsKey(a.substring(2)) || i + 1 >= args.length) {
        System.err.println("unknown or incomplete option: " + a + " (expected one of " + opts.keySet()
            + ", each with a value)");
        System.exit(2);
      }
      opts.put(a.substring(2), args[++i]);
    }
    new BalanceBenchmark(opts).runAll();
    System.exit(0);
  }

  private int intOpt(String name) {
    return Integer.parseInt(opts.get(name));
  }

  private void runAll() throws Exception {
    List<Run> runs = new ArrayList<>();
    for (String r : opts.get("runs").split(",")) {
      runs.add(switch (r.trim()) {
        case "healthy-p2c" -> new Run(r, SidecarConfig.BalancerKind.P2C_EWMA, false);
        case "healthy-rr" -> new Run(r, SidecarConfig.BalancerKind.ROUND_ROBIN, false);
        case "slowed-rr" -> new Run(r, SidecarConfig.BalancerKind.ROUND_ROBIN, true);
        case "slowed-p2c" -> new Run(r, SidecarConfig.BalancerKind.P2C_EWMA, true);
        default -> throw new IllegalArgumentException(
            "runs: " + r + " (expected: healthy-p2c, healthy-rr, slowed-rr, slowed-p2c)");
      });
    }
    double rate = Double.parseDouble(opts.get("rate"));
    int seconds = intOpt("duration");
    int backends = intOpt("backends");
    long delayNanos = TimeUnit.MILLISECONDS.toNanos(intOpt("delay-ms"));
    long slowNanos = delayNanos * intOpt("slow-factor");

    System.out.printf(Locale.ROOT, "# balance-bench on %d cores; load average before: %s%n",
        Runtime.getRuntime().availableProcessors(), loadAverage());
    System.out.printf(Locale.ROOT,
        "%d backends answering after %d ms (one at %d ms for the second half of slowed runs), %.0f req/s open loop"
            + " over %d connections, %d s measured after a %d s healthy warm-up, fresh sidecar per run (after one unreported JIT warm-up run)%n%n",
        backends, delayNanos / 1_000_000, slowNanos / 1_000_000, rate, intOpt("connections"), seconds,
        intOpt("warmup"));

    int jit = intOpt("jit-warmup");
    if (jit > 0) {
      measure(new Run("jit-warmup", SidecarConfig.BalancerKind.P2C_EWMA, true), rate, jit, backends, delayNanos,
          slowNanos);
      System.err.printf("balance-bench: JIT warm-up done (load average %s)%n", loadAverage());
    }
    List<Outcome> outcomes = new ArrayList<>();
    for (Run run : runs) {
      outcomes.add(measure(run, rate, seconds, backends, delayNanos, slowNanos));
      System.err.printf("balance-bench: %s done (load average %s)%n", run.name(), loadAverage());
    }

    System.out.println("| run | balancer | requests | errors | p50 ms | p99 ms | p99.9 ms | max ms | slow backend's share, 2nd half |");
    System.out.println("|---|---|---|---|---|---|---|---|---|");
    for (Outcome o : outcomes) {
      long[] l = o.result().latencies();
      System.out.printf(Locale.ROOT, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |%n",
          o.run().name(), o.run().balancer().name().toLowerCase(Locale.ROOT).replace('_', '-'), l.length,
          o.result().errors(), ms(o.result().quantile(0.50, 0, l.length)), ms(o.result().quantile(0.99, 0, l.length)),
          ms(o.result().quantile(0.999, 0, l.length)), ms(o.result().quantile(1.0, 0, l.length)),
          o.hitsSecondHalf() == 0 ? "n/a"
              : String.format(Locale.ROOT, "%.1f %%", 100.0 * o.slowHitsSecondHalf() / o.hitsSecondHalf()));
    }
    System.out.println();
    ratios(outcomes);
    System.out.printf(Locale.ROOT, "%nload average after: %s%n", loadAverage());
  }

  private static void ratios(List<Outcome> outcomes) {
    Outcome healthy = find(outcomes, "healthy-p2c");
    Outcome rr = find(outcomes, "slowed-rr");
    Outcome p2c = find(outcomes, "slowed-p2c");
    if (p2c == null) {
      return;
    }
    for (double q : new double[] {0.99, 0.999}) {
      String label = q == 0.99 ? "p99" : "p99.9";
      long slowed = whole(p2c, q);
      if (healthy != null) {
        System.out.printf(Locale.ROOT, "* slowed p2c-ewma %s / healthy p2c-ewma %s = %.2f (goal for p99: <= 1.5)%n",
            label, label, (double) slowed / whole(healthy, q));
      }
      if (rr != null) {
        System.out.printf(Locale.ROOT, "* slowed round-robin %s / slowed p2c-ewma %s = %.2f (goal for p99: >= 5)%n",
            label, label, (double) whole(rr, q) / slowed);
      }
    }
  }

  private static long whole(Outcome o, double q) {
    return o.result().quantile(q, 0, o.result().latencies().length);
  }

  private static Outcome find(List<Outcome> outcomes, String name) {
    return outcomes.stream().filter(o -> o.run().name().equals(name)).findFirst().orElse(null);
  }

  private Outcome measure(Run run, double rate, int seconds, int n, long delayNanos, long slowNanos) throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    EventLoopGroup backendLoops = NettyTransport.best().newEventLoopGroup(1, "bench-backend");
    EventLoopGroup loadLoop = NettyTransport.best().newEventLoopGroup(1, "bench-load");
    Path dir = Files.createTempDirectory("balance-bench");
    List<DelayBackend> backends = new ArrayList<>();
    ControlPlane controlPlane = null;
    Sidecar sidecar = null;
    OpenLoopLoad load = null;
    try {
      for (int i = 0; i < n; i++) {
        backends.add(new DelayBackend(backendLoops, "b" + i, delayNanos));
      }
      writeManifests(dir, backends);
      TimeSource time = TimeSource.system(scheduler);
      controlPlane = new ControlPlane(ControlPlaneConfig.builder()
          .source(ControlPlaneConfig.SourceType.FILES).dir(dir)
          .grpcBindAddress("127.0.0.1").grpcPort(0).adminPort(0)
          .build(), time, new PrometheusRegistry());
      controlPlane.start();
      PrometheusRegistry registry = new PrometheusRegistry();
      sidecar = new Sidecar(
          SidecarConfig.defaults("127.0.0.1:" + controlPlane.grpcAddress().getPort())
              .withPorts(0, 0).withBalancer(run.balancer()),
          time, registry).start();
      load = new OpenLoopLoad(loadLoop.next(), sidecar.outboundAddress(), AUTHORITY, intOpt("connections"), ticker);
      awaitEndpoints(load, registry, n);

      load.run(rate, Duration.ofSeconds(intOpt("warmup")), null);

      DelayBackend slow = backends.get(0);
      AtomicLong slowAtMid = new AtomicLong();
      AtomicLong allAtMid = new AtomicLong();
      Runnable midway = () -> {
        slowAtMid.set(slow.hits());
        allAtMid.set(total(backends));
        if (run.slowed()) {
          slow.delayNanos(slowNanos);
        }
      };
      OpenLoopLoad.Result result = load.run(rate, Duration.ofSeconds(seconds), midway);
      return new Outcome(run, result, slow.hits() - slowAtMid.get(), total(backends) - allAtMid.get());
    } finally {
      if (load != null) {
        load.close();
      }
      if (sidecar != null) {
        sidecar.close();
      }
      if (controlPlane != null) {
        controlPlane.close();
      }
      for (DelayBackend b : backends) {
        b.close();
      }
      loadLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      backendLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      scheduler.shutdownNow();
      try (var files = Files.list(dir)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(dir);
    }
  }

  /** Sends a trickle of requests until the sidecar's balancer holds all {@code n} endpoints. */
  private static void awaitEndpoints(OpenLoopLoad load, PrometheusRegistry registry, int n) throws Exception {
    for (int attempt = 0; attempt < 100; attempt++) {
      load.run(20, Duration.ofMillis(500), null);
      if (endpointsKnown(registry) >= n) {
        return;
      }
    }
    throw new IllegalStateException("the sidecar never saw " + n + " endpoints of " + AUTHORITY);
  }

  private static int endpointsKnown(PrometheusRegistry registry) {
    for (MetricSnapshot s : registry.scrape()) {
      if (s.getMetadata().getPrometheusName().equals("portage_sidecar_endpoint_in_flight")) {
        return ((GaugeSnapshot) s).getDataPoints().size();
      }
    }
    return 0;
  }

  private static long total(List<DelayBackend> backends) {
    return backends.stream().mapToLong(DelayBackend::hits).sum();
  }

  /** A Service {@code bench} (port 8080) and one EndpointSlice per backend (each its own port). */
  private static void writeManifests(Path dir, List<DelayBackend> backends) throws IOException {
    StringBuilder y = new StringBuilder("""
        apiVersion: v1
        kind: Service
        metadata: {name: bench, namespace: default}
        spec:
          ports:
            - {name: http, protocol: TCP, port: 8080, targetPort: 8080}
        """);
    for (DelayBackend b : backends) {
      y.append("""
          ---
          apiVersion: discovery.k8s.io/v1
          kind: EndpointSlice
          metadata:
            name: bench-%s
            namespace: default
            labels: {kubernetes.io/service-name: bench}
          addressType: IPv4
          endpoints:
            - addresses: ["127.0.0.1"]
              conditions: {ready: true}
          ports:
            - {name: http, protocol: TCP, port: %d}
          """.formatted(b.name(), b.port()));
    }
    Files.writeString(dir.resolve("bench.yaml"), y);
  }

  private static String ms(long nanos) {
    return nanos < 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", nanos / 1e6);
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "n/a";
    }
  }
}
