package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hub between real Kubernetes clients (kubectl, the fabric8 client) and the fabric8 mock API
 * server in CRUD mode: online, offline from the cache, offline across a hub restart, and back online.
 */
class EdgeHubIntegrationTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
  private final KubernetesMixedDispatcher dispatcher = new KubernetesMixedDispatcher(expectations);
  private KubernetesMockServer upstream;
  private int upstreamPort;
  private EdgeHub hub;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    upstream = startUpstream(0);
    upstreamPort = upstream.getPort();
    try (KubernetesClient direct = upstream.createClient()) {
      direct.pods().inNamespace("default").resource(pod("default", "web-0", "web")).create();
      direct.pods().inNamespace("default").resource(pod("default", "web-1", "web")).create();
      direct.pods().inNamespace("kube-system").resource(pod("kube-system", "coredns-1", "dns")).create();
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
    if (hub != null) {
      hub.close();
    }
    if (upstream != null) {
      MockApiServers.destroy(upstream);
    }
  }

  private KubernetesMockServer startUpstream(int port) {
    KubernetesMockServer server =
        new KubernetesMockServer(new Context(), new MockWebServer(), expectations, dispatcher, false);
    server.init(InetAddress.getLoopbackAddress(), port);
    // Discovery documents, so kubectl can map "pods" to its path (kubectl adds ?timeout=...).
    Map<String, Object> discovery = Map.of(
        "/api", new APIVersionsBuilder().withVersions("v1").build(),
        "/apis", new APIGroupListBuilder().build(),
        "/api/v1", new APIResourceListBuilder().withGroupVersion("v1")
            .withResources(new APIResourceBuilder().withName("pods").withKind("Pod")
                .withNamespaced(true).withSingularName("pod")
                .withVerbs("get", "list", "watch", "create", "delete").build())
            .build());
    discovery.forEach((path, doc) -> {
      for (String query : List.of("", "?timeout=10s", "?timeout=32s")) {
        server.expect().get().withPath(path + query).andReturn(200, doc).always();
      }
    });
    return server;
  }

  private static Pod pod(String ns, String name, String app) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace(ns)
        .addToLabels("app", app).endMetadata()
        .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("nginx")
        .endContainer().endSpec().build();
  }

  private EdgeHub startHub() throws IOException {
    return startHub(0);
  }

  private EdgeHub startHub(int proxyPort) throws IOException {
    EdgeHubConfig config =
        EdgeHubConfig.defaults(List.of("http://127.0.0.1:" + upstreamPort), dir.resolve("cache"))
            .withPorts(proxyPort, 0, 0)
            .withExtraCacheAgents(Set.of("*"));
    return new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
  }

  private String hubUrl() {
    return "http://127.0.0.1:" + hub.proxyAddress().getPort();
  }

  private KubernetesClient client() {
    KubernetesClient c = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl(hubUrl()).withNamespace("default")
            .withRequestRetryBackoffLimit(0).withOauthToken("caller-token").build())
        .build();
    closeables.add(c);
    return c;
  }

  private Path kubeconfig() throws IOException {
    Path f = dir.resolve("kubeconfig");
    Files.writeString(f, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: hub
          cluster:
            server: %s
        contexts:
        - name: hub
          context:
            cluster: hub
            user: node
            namespace: default
        current-context: hub
        users:
        - name: node
          user:
            token: caller-token
        """.formatted(hubUrl()));
    return f;
  }

  /** Runs kubectl against the hub; returns stdout, failing the test on a non-zero exit. */
  private String kubectl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("kubectl", "--kubeconfig", kubeconfig().toString(),
        "--cache-dir", dir.resolve("kubectl-cache").toString(), "--request-timeout", "10s"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue())
        .as("kubectl %s: %s", String.join(" ", args), new String(err, StandardCharsets.UTF_8))
        .isZero();
    return new String(out, StandardCharsets.UTF_8);
  }

  /**
   * {@code kubectl get pods -A -o name}, sorted: the mock lists in creation order, the cache (like
   * a real apiserver) by namespace and name.
   */
  private List<String> names() throws Exception {
    return kubectl("get", "pods", "-A", "-o", "name").lines().sorted().toList();
  }

  /** Advances the hub's clock one health-check interval at a time until {@code healthy}. */
  private int advanceUntilHealth(boolean healthy) {
    int[] intervals = {0};
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
      if (hub.cloudHealthy() == healthy) {
        return true;
      }
      clock.advance(Duration.ofSeconds(10));
      intervals[0]++;
      return false;
    });
    return intervals[0];
  }

  @Test
  void servesKubectlAndFabric8OnlineThenFromTheCacheOfflineAcrossARestartThenOnlineAgain()
      throws Exception {
    hub = startHub();
    clock.runDue();

    // Online: kubectl and fabric8 through the hub; answers are cached as they stream.
    String table = kubectl("get", "pods", "-A");
    assertThat(table).contains("web-0", "web-1", "coredns-1");
    String yaml = kubectl("get", "pod", "web-0", "-o", "yaml");
    assertThat(yaml).contains("name: web-0", "app: web");
    KubernetesClient client = client();
    assertThat(client.pods().inAnyNamespace().list().getItems()).hasSize(3);

    // A watch through the hub (the fabric8 client watches over a WebSocket upgrade).
    BlockingQueue<String> events = new LinkedBlockingQueue<>();
    Watch watch = client.pods().inNamespace("default").watch(new Watcher<>() {
      @Override
      public void eventReceived(Action action, Pod resource) {
        events.add(action + " " + resource.getMetadata().getName());
      }

      @Override
      public void onClose(WatcherException cause) {}
    });
    try (KubernetesClient direct = upstream.createClient()) {
      direct.pods().inNamespace("default").resource(pod("default", "web-2", "web")).create();
    }
    // The mock first replays the existing pods as ADDED, then the new one.
    List<String> seen = new ArrayList<>();
    while (!seen.contains("ADDED web-2")) {
      String e = events.poll(10, TimeUnit.SECONDS);
      assertThat(e).as("watch events so far: %s", seen).isNotNull();
      seen.add(e);
    }
    assertThat(seen).contains("ADDED web-0", "ADDED web-1");
    watch.close();
    List<String> listAfterWatch = names();
    assertThat(listAfterWatch).contains("pod/web-2").hasSize(4);

    // Upstream down: the same commands answer the same objects from the cache.
    MockApiServers.destroy(upstream);
    upstream = null;
    assertThat(names()).isEqualTo(listAfterWatch);
    assertThat(kubectl("get", "pod", "web-0", "-o", "yaml")).isEqualTo(yaml);
    // fabric8's own cache: its list from before web-2 existed. Its watch ran over a WebSocket,
    // which the hub relays byte for byte without caching (only chunked HTTP watches are teed).
    assertThat(client.pods().inNamespace("default").withLabel("app", "web").list().getItems())
        .extracting(p -> p.getMetadata().getName()).containsExactly("web-0", "web-1");
    assertThat(advanceUntilHealth(false)).isLessThanOrEqualTo(4);

    // Hub restart with the upstream still down: still the same objects.
    // Same port: kubectl keys its discovery cache by server URL (EdgeHubDiscoveryTest covers a
    // kubectl without one).
    int proxyPort = hub.proxyAddress().getPort();
    hub.close();
    hub = startHub(proxyPort);
    clock.runDue();
    assertThat(names()).isEqualTo(listAfterWatch);
    assertThat(kubectl("get", "pod", "web-0", "-o", "yaml")).isEqualTo(yaml);
    assertThat(advanceUntilHealth(false)).isLessThanOrEqualTo(4);

    // Offline watch: held open with no events, ended when the cloud is back.
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    var heldWatch = http.sendAsync(
        HttpRequest.newBuilder(URI.create(hubUrl() + "/api/v1/namespaces/default/pods?watch=true"))
            .header("User-Agent", "kubelet/v1.30").timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.heldWatches() == 1);

    // Upstream back: the hub notices within the health-check interval and proxies again.
    upstream = startUpstream(upstreamPort);
    assertThat(advanceUntilHealth(true)).isLessThanOrEqualTo(2);
    clock.advance(Duration.ofSeconds(2));
    HttpResponse<String> ended = heldWatch.get(10, TimeUnit.SECONDS);
    assertThat(ended.statusCode()).isEqualTo(200);
    assertThat(ended.body()).isEmpty();
    assertThat(names()).isEqualTo(listAfterWatch);
    assertThat(client.pods().inNamespace("default").withName("web-0").get()).isNotNull();
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.inFlight() == 0);
  }

  @Test
  void chunkedWatchEventsStreamToTheClientAndUpdateTheCache() throws Exception {
    Pod added = pod("default", "streamed", "web");
    added.getMetadata().setResourceVersion("900");
    Pod deleted = pod("default", "web-1", "web");
    deleted.getMetadata().setResourceVersion("901");
    // Two events in one body (the mock's own chunked encoding is broken: it chunks twice).
    String body = JSON.writeValueAsString(new WatchEvent(added, "ADDED")) + "\n"
        + JSON.writeValueAsString(new WatchEvent(deleted, "DELETED")) + "\n";
    upstream.expect().get().withPath("/api/v1/namespaces/default/pods?watch=true")
        .andReturn(200, body).once();
    hub = startHub();
    try (KubernetesClient kubelet = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
        .withMasterUrl(hubUrl()).withUserAgent("kubelet/v1.30").build()).build()) {
      assertThat(kubelet.pods().inAnyNamespace().list().getItems()).hasSize(3);
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(dir.resolve("cache/kubelet/pods/default/web-1")));
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpResponse<String> r = http.send(
        HttpRequest.newBuilder(URI.create(hubUrl() + "/api/v1/namespaces/default/pods?watch=true"))
            .header("User-Agent", "kubelet/v1.30 (linux/amd64)").timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo(body);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(dir.resolve("cache/kubelet/pods/default/streamed")));
    assertThat(dir.resolve("cache/kubelet/pods/default/web-1")).doesNotExist();
  }
}
