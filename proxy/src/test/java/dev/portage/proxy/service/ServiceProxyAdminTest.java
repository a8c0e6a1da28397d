package dev.portage.proxy.service;

import static dev.portage.proxy.service.ProxyFixture.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin listener, the metrics it serves, and start-up and file-watch behaviour. */
class ServiceProxyAdminTest {

  @TempDir Path dir;

  private static HttpResponse<String> get(ServiceProxy proxy, String path) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://" + HostPort.format(proxy.adminAddress()) + path))
              .timeout(Duration.ofSeconds(10))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }

  @Test
  void readyOnlyAfterTheFirstSyncAndServesMetrics() throws Exception {
    try (TestBackend a = TestBackend.start("a")) {
      Path file = dir.resolve("endpoints.yaml");
      Files.writeString(file, service("web", a.endpoint()));
      FakeClock clock = new FakeClock();
      PrometheusRegistry registry = new PrometheusRegistry();
      ServiceProxyConfig config = ServiceProxyConfig.builder().endpointsFile(file).adminPort(0).ioThreads(1).build();
      try (ServiceProxy proxy =
          new ServiceProxy(config, new FileEndpointSource(file, false, () -> {}), clock.timeSource(), registry)) {
        proxy.start();
        assertThat(get(proxy, "/healthz").statusCode()).isEqualTo(200);
        HttpResponse<String> notReady = get(proxy, "/readyz");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).contains("sync");

        clock.runDue();
        assertThat(get(proxy, "/readyz").statusCode()).isEqualTo(200);

        try (TestClient client = TestClient.connect(proxy.localAddress("web"))) {
          assertThat(client.readLine()).isEqualTo("a");
          assertThat(client.echo("12345")).isEqualTo("12345");
          assertThat(TestMetrics.value(registry,
              "portage_service_proxy_active_connections{endpoint=\"" + a.endpoint() + "\",service=\"web\"}"))
              .isEqualTo(1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> proxy.liveConnections() == 0);

        String metrics = get(proxy, "/metrics").body();
        assertThat(metrics)
            .contains("portage_service_proxy_connections_total{endpoint=\"" + a.endpoint() + "\",service=\"web\"} 1")
            .contains("portage_service_proxy_active_connections{endpoint=\"" + a.endpoint() + "\",service=\"web\"} 0")
            .contains("portage_service_proxy_bytes_total{direction=\"in\",service=\"web\"} 6")
            .contains("portage_service_proxy_bytes_total{direction=\"out\",service=\"web\"} 8") // "a\n" + echo
            .contains("portage_service_proxy_syncs_total 1")
            .contains("portage_service_proxy_sync_proxy_rules_duration_seconds_count 1")
            .contains("portage_service_proxy_services 1");
      }
    }
  }

  @Test
  void malformedFileAtStartFailsStartWithFileAndLine() throws Exception {
    Path file = dir.resolve("endpoints.yaml");
    Files.writeString(file, "services:\n  - name: web\n    listen: nowhere\n    endpoints: []\n");
    FakeClock clock = new FakeClock();
    ServiceProxyConfig config = ServiceProxyConfig.builder().endpointsFile(file).adminPort(0).build();
    ServiceProxy proxy = new ServiceProxy(config, clock.timeSource(), new PrometheusRegistry());

    assertThatThrownBy(proxy::start)
        .isInstanceOf(MalformedEndpointsFileException.class)
        .hasMessage(file.toAbsolutePath() + ":3: services[0]: web: listen: nowhere (expected: host:port)");
    proxy.close();
  }

  @Test
  void watchedFileIsReloadedWhenItChanges() throws Exception {
    try (TestBackend a = TestBackend.start("a"); TestBackend b = TestBackend.start("b")) {
      Path file = dir.resolve("endpoints.yaml");
      Files.writeString(file, service("web", a.endpoint()));
      FakeClock clock = new FakeClock();
      PrometheusRegistry registry = new PrometheusRegistry();
      ServiceProxyConfig config = ServiceProxyConfig.builder().endpointsFile(file).adminPort(-1).ioThreads(1).build();
      try (ServiceProxy proxy = new ServiceProxy(config, clock.timeSource(), registry).start()) {
        clock.runDue();
        assertThat(proxy.services()).containsExactly("web");

        Files.writeString(file, "services: [}\n"); // rejected and counted, old state kept
        // (the watcher may also see the truncated, empty file mid-write: rejected as well)
        await().atMost(Duration.ofSeconds(10)).until(() ->
            TestMetrics.value(registry, "portage_service_proxy_source_errors_total") >= 1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(proxy.services()).containsExactly("web");

        Files.writeString(file, "services:\n" + ProxyFixture.entry("api", new String[] {b.endpoint()}, ""));
        await().atMost(Duration.ofSeconds(10)).until(() -> {
          clock.advance(Duration.ofSeconds(1)); // the watch thread asked for a sync; let it run
          return proxy.services().contains("api");
        });
        assertThat(proxy.services()).containsExactly("api");
        assertThat(TestClient.greeting(proxy.localAddress("api"))).isEqualTo("b");
        assertThatThrownBy(proxy::adminAddress).isInstanceOf(IllegalStateException.class);
      }
    }
  }
}
