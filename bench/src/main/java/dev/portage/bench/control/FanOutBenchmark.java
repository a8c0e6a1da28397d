package dev.portage.bench.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.control.store.SourceObject;
import dev.portage.core.time.Ticker;
import dev.portage.core.time.TimeSource;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Push fan-out of the control plane: the time from one rule change written to the store until the
 * last of N subscribed dds streams has received it, over real gRPC on loopback, and the heap each
 * stream costs (client and server in this one JVM). Not a JMH benchmark: one control plane, N
 * streams over {@code --channels} HTTP/2 connections, {@code --changes} changes one after another.
 *
 * <pre>
 * java -Xmx2g -cp bench/target/benchmarks.jar dev.portage.bench.control.FanOutBenchmark \
 *     --streams 10000 --changes 50 [--channels 100] [--debounce-after 0ms]
 * </pre>
 */
public final class FanOutBenchmark {

  private static final String TAG = "dubbo.apache.org/v1alpha1/TagRoute";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Ticker TICKER = Ticker.system();

  private final int streams;
  private final int changes;
  private final int channelCount;
  private final Duration debounce;

  // The change being measured: streams count themselves once they have a revision >= target.
  private volatile long target = Long.MAX_VALUE;
  private volatile long changedAt;
  private volatile CountDownLatch converged;
  private volatile long convergedNanos;
  private final AtomicInteger reached = new AtomicInteger();
  private volatile boolean closing;

  private FanOutBenchmark(int streams, int changes, int channelCount, Duration debounce) {
    this.streams = streams;
    this.changes = changes;
    this.channelCount = channelCount;
    this.debounce = debounce;
  }

  public static void main(String[] args) throws Exception {
    int streams = intArg(args, "--streams", 1000);
    int changes = intArg(args, "--changes", 50);
    int channels = intArg(args, "--channels", Math.max(1, streams / 100));
    String debounce = stringArg(args, "--debounce-after", "0ms");
    if (!debounce.endsWith("ms")) {
      throw new IllegalArgumentException("--debounce-after: " + debounce + " (expected: milliseconds such as 0ms, 100ms)");
    }
    new FanOutBenchmark(streams, changes, channels,
        Duration.ofMillis(Long.parseLong(debounce.substring(0, debounce.length() - 2)))).run();
  }

  private void run() throws Exception {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    Path dir = Files.createTempDirectory("portage-fanout-");
    ControlPlaneConfig config = ControlPlaneConfig.builder()
        .dir(dir).grpcBindAddress("127.0.0.1").grpcPort(0).adminPort(0)
        .debounce(debounce, debounce.multipliedBy(10))
        .build();
    List<ManagedChannel> channels = new ArrayList<>();
    try (ControlPlane plane = new ControlPlane(config, TimeSource.system(scheduler), new PrometheusRegistry())) {
      plane.start();
      plane.store().put(tagRoute(0), 0);
      for (int i = 0; i < channelCount; i++) {
        channels.add(NettyChannelBuilder.forAddress(plane.grpcAddress()).usePlaintext().build());
      }
      long heapBefore = usedHeapAfterGc();
      CountDownLatch first = new CountDownLatch(streams);
      List<Subscriber> subs = new ArrayList<>(streams);
      for (int i = 0; i < streams; i++) {
        Subscriber s = new Subscriber(first);
        RuleServiceGrpc.newStub(channels.get(i % channelCount)).observe(s);
        s.send("", TAG);
        subs.add(s);
      }
      if (!first.await(120, TimeUnit.SECONDS)) {
        throw new IllegalStateException("only " + (streams - first.getCount()) + " of " + streams + " streams got their first push");
      }
      long heapAfter = usedHeapAfterGc();
      System.out.printf("streams=%d channels=%d changes=%d debounce=%s cpus=%d loadavg=%s%n", streams, channelCount,
          changes, debounce, Runtime.getRuntime().availableProcessors(), loadAverage());
      System.out.printf("heap used after GC: %.1f MiB before streams, %.1f MiB with them: %.1f KiB per stream"
              + " (client + server)%n", heapBefore / 1048576.0, heapAfter / 1048576.0,
          (heapAfter - heapBefore) / 1024.0 / streams);

      double[] millis = new double[changes];
      for (int c = 1; c <= changes; c++) {
        reached.set(0);
        converged = new CountDownLatch(1);
        changedAt = TICKER.nanoTime();
        long rev = plane.store().put(tagRoute(c), 0);
        target = rev;
        // Streams that saw the revision before the target was published count themselves now.
        for (Subscriber s : subs) {
          s.check();
        }
        if (!converged.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("change " + c + ": only " + reached.get() + " of " + streams + " streams in 60 s");
        }
        millis[c - 1] = (convergedNanos - changedAt) / 1e6;
      }
      Arrays.sort(millis);
      System.out.printf("convergence of %d changes to all %d streams: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
          changes, streams, pct(millis, 0.50), pct(millis, 0.99), millis[millis.length - 1]);
      System.out.printf("peak heap committed: %.1f MiB, max heap: %.1f MiB%n",
          Runtime.getRuntime().totalMemory() / 1048576.0, Runtime.getRuntime().maxMemory() / 1048576.0);
      closing = true;
    } finally {
      closing = true;
      for (ManagedChannel ch : channels) {
        ch.shutdownNow();
      }
      for (ManagedChannel ch : channels) {
        ch.awaitTermination(5, TimeUnit.SECONDS);
      }
      scheduler.shutdownNow();
      try (var files = Files.list(dir)) {
        files.forEach(p -> p.toFile().delete());
      }
      Files.deleteIfExists(dir);
    }
  }

  /** One auto-acknowledging dds stream; counts itself toward convergence once per change. */
  private final class Subscriber implements ClientResponseObserver<ObserveRequest, ObserveResponse> {
    private final CountDownLatch first;
    private ClientCallStreamObserver<ObserveRequest> requests;
    private volatile long revision = -1;
    private long countedFor = -1; // guarded by this

    Subscriber(CountDownLatch first) {
      this.first = first;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<ObserveRequest> requestStream) {
      requests = requestStream;
    }

    synchronized void send(String nonce, String type) {
      requests.onNext(ObserveRequest.newBuilder().setNonce(nonce).setType(type).build());
    }

    @Override
    public void onNext(ObserveResponse r) {
      send(r.getNonce(), r.getType());
      boolean wasFirst = revision < 0;
      revision = r.getRevision();
      if (wasFirst) {
        first.countDown();
      }
      check();
    }

    synchronized void check() {
      long t = target;
      if (revision >= t && countedFor != t) {
        countedFor = t;
        if (reached.incrementAndGet() == streams) {
          convergedNanos = TICKER.nanoTime();
          converged.countDown();
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!closing) {
        System.err.println("stream failed: " + t);
      }
    }

    @Override
    public void onCompleted() {}
  }

  private static SourceObject tagRoute(int priority) {
    ObjectNode body = JSON.createObjectNode();
    body.put("apiVersion", "dubbo.apache.org/v1alpha1");
    body.put("kind", "TagRoute");
    body.putObject("metadata").put("name", "shop").put("namespace", "default");
    ObjectNode spec = body.putObject("spec").put("key", "shop").put("enabled", true).put("priority", priority);
    spec.putArray("tags").addObject().put("name", "gray").putArray("addresses").add("10.0.0.1:20880");
    return SourceObject.of(body, Integer.toString(priority));
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (java.io.IOException e) {
      return String.format("%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  private static double pct(double[] sorted, double p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
  }

  private static int intArg(String[] args, String name, int def) {
    String v = stringArg(args, name, null);
    return v == null ? def : Integer.parseInt(v);
  }

  private static String stringArg(String[] args, String name, String def) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return def;
  }
}
