package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Discovery offline: {@code /api}, {@code /apis}, {@code /api/v1} and {@code /apis/<g>/<v>} seen
 * through the hub are cached, so a kubectl that has no discovery cache of its own (a fresh
 * {@code --cache-dir}) still works against the hub while the API server is down.
 */
class EdgeHubDiscoveryTest {

  private static final String AGGREGATED =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
  private final KubernetesMixedDispatcher dispatcher = new KubernetesMixedDispatcher(expectations);
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private KubernetesMockServer upstream;
  private EdgeHub hub;

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    if (upstream != null) {
      MockApiServers.destroy(upstream);
    }
  }

  private void startUpstreamWithDiscovery() {
    upstream = new KubernetesMockServer(
        new Context(), new MockWebServer(), expectations, dispatcher, false);
    upstream.init(InetAddress.getLoopbackAddress(), 0);
    Map<String, Object> discovery = Map.of(
        "/api", new APIVersionsBuilder().withVersions("v1").build(),
        "/apis", new APIGroupListBuilder().addNewGroup().withName("apps")
            .addNewVersion().withGroupVersion("apps/v1").withVersion("v1").endVersion()
            .withNewPreferredVersion().withGroupVersion("apps/v1").withVersion("v1")
            .endPreferredVersion().endGroup().build(),
        "/api/v1", new APIResourceListBuilder().withGroupVersion("v1")
            .withResources(new APIResourceBuilder().withName("pods").withKind("Pod")
                .withNamespaced(true).withSingularName("pod")
                .withVerbs("get", "list", "watch", "create", "delete").build())
            .build(),
        "/apis/apps/v1", new APIResourceListBuilder().withGroupVersion("apps/v1")
            .withResources(new APIResourceBuilder().withName("deployments").withKind("Deployment")
                .withNamespaced(true).withSingularName("deployment")
                .withVerbs("get", "list", "watch").build())
            .build());
    discovery.forEach((path, doc) -> {
      for (String query : List.of("", "?timeout=10s", "?timeout=32s")) {
        upstream.expect().get().withPath(path + query).andReturn(200, doc).always();
      }
    });
    try (KubernetesClient c = upstream.createClient()) {
      c.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
          .withName("web-0").withNamespace("default").endMetadata().withNewSpec()
          .addNewContainer().withName("c").withImage("nginx").endContainer().endSpec().build())
          .create();
    }
  }

  private void startHub() throws Exception {
    EdgeHubConfig config = EdgeHubConfig.defaults(
            List.of("http://127.0.0.1:" + upstream.getPort()), dir.resolve("cache"))
        .withPorts(0, 0, 0)
        .withExtraCacheAgents(Set.of("kubectl"));
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
  }

  @Test
  void kubectlWithAFreshDiscoveryCacheWorksOfflineFromTheHubsDiscoveryCache() throws Exception {
    startUpstreamWithDiscovery();
    startHub();
    assertThat(kubectl("online", "get", "pods", "-o", "name")).isEqualTo("pod/web-0\n");
    assertThat(kubectl("online", "get", "pod", "web-0", "-o", "name")).isEqualTo("pod/web-0\n");
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(
        dir.resolve("cache/.discovery").resolve("%2Fapis%2Fapps%2Fv1")));

    MockApiServers.destroy(upstream);
    upstream = null;
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      clock.advance(Duration.ofSeconds(10));
      return !hub.cloudHealthy();
    });
    // A kubectl that never talked to this server: its discovery comes from the hub's cache.
    assertThat(kubectl("offline-1", "get", "pods", "-o", "name")).isEqualTo("pod/web-0\n");
    assertThat(kubectl("offline-2", "get", "pod", "web-0", "-o", "name")).isEqualTo("pod/web-0\n");
    assertThat(kubectl("offline-3", "api-resources", "--no-headers", "-o", "name"))
        .contains("pods", "deployments.apps");

    // A plain JSON document answers an aggregated-discovery Accept too; the client sees its type.
    HttpResponse<String> apis = hubGet("/apis", AGGREGATED + ",application/json", "kubectl/v1.32");
    assertThat(apis.statusCode()).isEqualTo(200);
    assertThat(apis.headers().firstValue("content-type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("application/json").doesNotContain("apidiscovery"));
    assertThat(apis.body()).contains("\"APIGroupList\"", "apps/v1");
    // Never seen: a clear 503, not a guess; and only cached components are answered.
    assertThat(hubGet("/apis/batch/v1", "", "kubectl/v1.32").statusCode()).isEqualTo(503);
    HttpResponse<String> other = hubGet("/api", "", "curl/8.0");
    assertThat(other.statusCode()).isEqualTo(503);
    assertThat(other.body()).contains("--cache-agents");
  }

  private HttpResponse<String> hubGet(String path, String accept, String agent) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + hub.proxyAddress().getPort() + path))
        .header("User-Agent", agent).timeout(Duration.ofSeconds(5));
    if (!accept.isEmpty()) {
      b.header("Accept", accept);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Runs kubectl against the hub with its own fresh {@code --cache-dir}; returns stdout. */
  private String kubectl(String cacheDir, String... args) throws Exception {
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: hub
          cluster:
            server: http://127.0.0.1:%d
        contexts:
        - name: hub
          context:
            cluster: hub
            namespace: default
        current-context: hub
        """.formatted(hub.proxyAddress().getPort()));
    List<String> cmd = new ArrayList<>(List.of("kubectl", "--kubeconfig", kubeconfig.toString(),
        "--cache-dir", dir.resolve("kubectl-" + cacheDir).toString(), "--request-timeout", "10s"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue())
        .as("kubectl %s: %s", String.join(" ", args), new String(err, StandardCharsets.UTF_8))
        .isZero();
    return new String(out, StandardCharsets.UTF_8);
  }
}
