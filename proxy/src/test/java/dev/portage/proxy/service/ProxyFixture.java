package dev.portage.proxy.service;

import dev.portage.core.time.FakeClock;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A service proxy over an endpoints file in a temp directory, with a fake clock driving its syncs:
 * {@link #write} changes the file, {@link #reload} re-reads it and {@link #sync} lets fake time pass so
 * the rate-limited sync runs. The data path is real sockets.
 */
final class ProxyFixture implements AutoCloseable {

  final FakeClock clock = new FakeClock();
  final PrometheusRegistry registry = new PrometheusRegistry();
  final Path file;
  final FileEndpointSource source;
  final ServiceProxy proxy;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  ProxyFixture(Path dir, String yaml) throws IOException {
    this(dir, yaml, UnaryOperator.identity());
  }

  ProxyFixture(Path dir, String yaml, UnaryOperator<ServiceProxyConfig.Builder> options) throws IOException {
    file = dir.resolve("endpoints.yaml");
    Files.writeString(file, yaml);
    source = new FileEndpointSource(file, false, () -> {});
    ServiceProxyConfig config =
        options.apply(ServiceProxyConfig.builder().endpointsFile(file).adminPort(0).ioThreads(2)).build();
    proxy = new ServiceProxy(config, source, clock.timeSource(), registry);
    proxy.start();
    clock.runDue(); // the first sync
  }

  /** A YAML document with one service {@code name} listening on 127.0.0.1:0. */
  static String service(String name, String... endpoints) {
    return "services:\n" + entry(name, endpoints, "");
  }

  /** One list entry; {@code extra} adds indented lines such as {@code "    balancer: random\n"}. */
  static String entry(String name, String[] endpoints, String extra) {
    StringBuilder sb = new StringBuilder()
        .append("  - name: ").append(name).append('\n')
        .append("    listen: 127.0.0.1:0\n")
        .append("    endpoints: [");
    for (int i = 0; i < endpoints.length; i++) {
      sb.append(i == 0 ? "" : ", ").append('"').append(endpoints[i]).append('"');
    }
    return sb.append("]\n").append(extra).toString();
  }

  TestBackend backend(String name) throws IOException {
    TestBackend b = TestBackend.start(name);
    closeables.add(b);
    return b;
  }

  /** Rewrites the file, reloads it and runs the sync. */
  void apply(String yaml) throws IOException {
    write(yaml);
    reload();
    sync();
  }

  void write(String yaml) throws IOException {
    Files.writeString(file, yaml);
  }

  void reload() throws IOException {
    source.reload();
  }

  /** One second of fake time: always enough for the rate limiter to grant a pending sync. */
  void sync() {
    clock.advance(Duration.ofSeconds(1));
  }

  InetSocketAddress address(String service) {
    InetSocketAddress a = proxy.localAddress(service);
    if (a == null) {
      throw new AssertionError("service " + service + " has no listener; services: " + proxy.services());
    }
    return a;
  }

  double metric(String series) {
    return TestMetrics.value(registry, series);
  }

  @Override
  public void close() throws Exception {
    proxy.close();
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }
}
