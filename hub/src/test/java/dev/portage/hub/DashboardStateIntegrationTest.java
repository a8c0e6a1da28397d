package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.admin.DashboardJson;
import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub's {@code /dashboard/state}: upstream health, cache by component, online then offline. */
class DashboardStateIntegrationTest {

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private KubernetesMockServer upstream;
  private String server;
  private EdgeHub hub;

  @BeforeEach
  void setUp() throws Exception {
    upstream = new KubernetesMockServer(false);
    upstream.start();
    upstream.expect().get().withPath("/api/v1/namespaces/default/pods/web")
        .andReturn(200, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web\"}}").always();
    server = upstream.url("/").replaceAll("/$", "");
    EdgeHubConfig config = EdgeHubConfig.defaults(List.of(server), dir)
        .withPorts(0, 0, 0)
        .withLimits(Upstreams.Heartbeat.defaults(), 10);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
  }

  @AfterEach
  void tearDown() {
    hub.close();
    MockApiServers.destroy(upstream);
    http.close();
  }

  private DashboardJson state() throws Exception {
    return DashboardJson.fetch(hub.serverAddress());
  }

  private DashboardJson awaitState(Predicate<DashboardJson> condition) {
    return DashboardJson.awaitState(hub.serverAddress(), condition);
  }

  @Test
  void showsUpstreamHealthCacheSizeByComponentAndOnlineThenOffline() throws Exception {
    DashboardJson fresh = state();
    assertThat(fresh.component()).isEqualTo("edge-hub");
    assertThat(fresh.titles()).containsExactly("Hub", "API servers", "Cache by component");
    assertThat(fresh.fields("Hub"))
        .containsEntry("mode", "online")
        .containsEntry("online", true)
        .containsEntry("load balancing", "RR")
        .containsEntry("requests in flight", 0L)
        .containsEntry("cache bytes", 0L);
    assertThat(fresh.rows("API servers"))
        .containsExactly(Map.of("server", server, "healthy", true, "in flight", 0L));
    assertThat(fresh.rows("Cache by component")).isEmpty();

    HttpResponse<String> pod = http.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + hub.proxyAddress().getPort() + "/api/v1/namespaces/default/pods/web"))
            .header("User-Agent", "kubelet/1").timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(pod.statusCode()).isEqualTo(200);
    // The cache write runs on the writer thread after the answer.
    DashboardJson cached = awaitState(s -> !s.rows("Cache by component").isEmpty());
    Map<String, Object> kubelet = cached.rows("Cache by component").get(0);
    assertThat(kubelet).containsEntry("component", "kubelet");
    assertThat((Long) kubelet.get("bytes")).isPositive();
    assertThat(cached.fields("Hub")).containsEntry("cache bytes", kubelet.get("bytes"));

    MockApiServers.destroy(upstream);
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
      clock.advance(Duration.ofSeconds(10)); // one health-check interval
      return !hub.cloudHealthy();
    });
    DashboardJson offline = state();
    assertThat(offline.fields("Hub")).containsEntry("mode", "offline").containsEntry("online", false);
    assertThat(offline.rows("API servers").get(0)).containsEntry("healthy", false);
  }
}
