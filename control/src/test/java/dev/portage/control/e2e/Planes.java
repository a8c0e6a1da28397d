package dev.portage.control.e2e;

import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.core.time.TimeSource;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture: real {@link ControlPlane}s on loopback port 0 with the system clock (these tests
 * exercise real sockets, a real directory watcher and real timers; every wait is bounded) and real
 * Netty channels to them, all closed by {@link #close()}.
 */
final class Planes implements AutoCloseable {

  /** Short debounce so pushes follow changes quickly; the debounce itself is unit-tested in rules/. */
  static final Duration DEBOUNCE = Duration.ofMillis(5);

  final PrometheusRegistry registry = new PrometheusRegistry();
  final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("e2e-timer").unstarted(r));
  private final List<AutoCloseable> resources = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** Loopback, ephemeral ports, short debounce. */
  static ControlPlaneConfig.Builder local() {
    return ControlPlaneConfig.builder()
        .grpcBindAddress("127.0.0.1")
        .grpcPort(0)
        .adminPort(0)
        .debounce(DEBOUNCE, Duration.ofMillis(50));
  }

  ControlPlane start(ControlPlaneConfig config) throws Exception {
    ControlPlane plane = new ControlPlane(config, TimeSource.system(scheduler), registry);
    resources.add(plane);
    plane.start();
    return plane;
  }

  ManagedChannel channel(ControlPlane plane) {
    ManagedChannel ch = NettyChannelBuilder.forAddress(plane.grpcAddress()).usePlaintext().build();
    resources.add(() -> {
      ch.shutdownNow();
      ch.awaitTermination(5, TimeUnit.SECONDS);
    });
    return ch;
  }

  /** Registers something to close with the fixture (closed newest first). */
  <T extends AutoCloseable> T closeLater(T resource) {
    resources.add(resource);
    return resource;
  }

  HttpResponse<String> get(ControlPlane plane, String path) throws Exception {
    var a = plane.adminAddress();
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.getPort() + path)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A sample {@code name{labels}} of a Prometheus text exposition, or -1 when absent. */
  static double sample(String exposition, String name, String labels) {
    String head = labels.isEmpty() ? name + " " : name + "{" + labels + "} ";
    for (String line : exposition.split("\n")) {
      if (line.startsWith(head)) {
        return Double.parseDouble(line.substring(head.length()).trim());
      }
    }
    return -1;
  }

  @Override
  public void close() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    http.close();
    scheduler.shutdownNow();
  }
}
