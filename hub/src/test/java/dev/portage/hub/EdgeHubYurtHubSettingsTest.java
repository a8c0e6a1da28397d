package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * YurtHub's settings that change what the hub does, end to end in front of the fabric8 mock API
 * server (CRUD mode) on real sockets: {@code --bind-proxy-address} apart from {@code
 * --bind-address}, {@code --working-mode=cloud}, {@code --profiling}, and {@code cache_agents} of
 * the {@code yurt-hub-cfg} ConfigMap in {@code --namespace}. Health checks run on a {@link
 * FakeClock}; nothing sleeps.
 */
class EdgeHubYurtHubSettingsTest {

  private static final Duration SECOND = Duration.ofSeconds(1);

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final CrudApiServer upstream = CrudApiServer.start();
  private EdgeHub hub;

  @BeforeEach
  void setUp() {
    try (KubernetesClient c = upstream.client()) {
      c.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("web-0")
          .withNamespace("default").endMetadata().withNewSpec().withNodeName("edge-node-1")
          .endSpec().build()).create();
    }
  }

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    upstream.close();
  }

  private EdgeHubConfig.Builder config() {
    return EdgeHubConfig.builder(List.of(upstream.url()), dir.resolve("cache"))
        .ports(0, 0, 0)
        .heartbeat(new Upstreams.Heartbeat(SECOND, SECOND, 1, 1))
        .nodeName("edge-node-1");
  }

  private EdgeHub start(EdgeHubConfig config) throws IOException {
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
    return hub;
  }

  private void goOffline() {
    upstream.stop();
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (!hub.cloudHealthy()) {
        return true;
      }
      clock.advance(SECOND);
      return false;
    });
  }

  private HttpResponse<String> get(String path, String userAgent) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(
            "http://" + hub.proxyAddress().getAddress().getHostAddress() + ":"
                + hub.proxyAddress().getPort() + path))
        .header("User-Agent", userAgent).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> hubServer(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + hub.serverAddress().getPort() + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void proxyPortsBindTheProxyAddressAndTheHubServerTheBindAddress() throws Exception {
    start(config().bindAddresses("127.0.0.1", "127.0.0.2").build());
    assertThat(hub.proxyAddress().getAddress().getHostAddress()).isEqualTo("127.0.0.2");
    assertThat(hub.serverAddress().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(get("/api/v1/namespaces/default/pods/web-0", "kubelet/v1.30").statusCode())
        .isEqualTo(200);
  }

  @Test
  void cloudModeOnlyProxiesNothingIsCachedOrAnsweredOffline() throws Exception {
    start(config().workingMode(WorkingMode.CLOUD).build());
    assertThat(get("/api/v1/namespaces/default/pods/web-0", "kubelet/v1.30").statusCode())
        .isEqualTo(200);
    assertThat(get("/api/v1/namespaces/default/pods", "kubelet/v1.30").statusCode())
        .isEqualTo(200);
    goOffline();
    HttpResponse<String> r = get("/api/v1/namespaces/default/pods/web-0", "kubelet/v1.30");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("no API server is reachable");
    assertThat(get("/api/v1/namespaces/default/pods?watch=true", "kubelet/v1.30").statusCode())
        .isEqualTo(503);
    assertThat(dir.resolve("cache/kubelet")).doesNotExist();
  }

  @Test
  void profilingServesThreadDumpsAndIsOffWhenDisabled() throws Exception {
    start(config().build());
    HttpResponse<String> dump = hubServer("/debug/pprof/goroutine?debug=2");
    assertThat(dump.statusCode()).isEqualTo(200);
    assertThat(dump.body()).contains("\"portage-hub-").contains("\tat ");
    assertThat(hubServer("/debug/pprof/").body()).contains("goroutine");
    hub.close();
    start(config().profiling(false).build());
    assertThat(hubServer("/debug/pprof/goroutine").statusCode()).isEqualTo(404);
  }

  @Test
  void cacheAgentsOfTheYurtHubConfigMapAreCachedAndSurviveAnOfflineRestart() throws Exception {
    try (KubernetesClient c = upstream.client()) {
      c.configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder().withNewMetadata()
          .withName("yurt-hub-cfg").withNamespace("kube-system").endMetadata()
          .addToData("cache_agents", "kubectl, edge-agent").build()).create();
    }
    start(config().namespace("kube-system").build());
    // Read through the hub as component "yurthub" once an API server is healthy.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      clock.advance(SECOND);
      assertThat(Files.exists(
          dir.resolve("cache/yurthub/configmaps/kube-system/yurt-hub-cfg"))).isTrue();
      assertThat(get("/api/v1/namespaces/default/pods/web-0", "kubectl/v1.30").statusCode())
          .isEqualTo(200);
      assertThat(Files.exists(dir.resolve("cache/kubectl/pods/default/web-0"))).isTrue();
    });
    assertThat(get("/api/v1/namespaces/default/pods/web-0", "curl/8").statusCode()).isEqualTo(200);

    goOffline();
    assertThat(get("/api/v1/namespaces/default/pods/web-0", "kubectl/v1.30").statusCode())
        .isEqualTo(200);
    assertThat(get("/api/v1/namespaces/default/pods/web-0", "curl/8").statusCode()).isEqualTo(503);

    // A restart while offline reads the ConfigMap from the cache: kubectl is still answered.
    hub.close();
    start(config().namespace("kube-system").build());
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(get("/api/v1/namespaces/default/pods/web-0", "kubectl/v1.30").statusCode())
            .isEqualTo(200));
    assertThat(Set.of(get("/api/v1/namespaces/default/pods/web-0", "edge-agent/1").statusCode()))
        .containsExactly(404); // cached as a component, but it never read this pod
  }
}
