package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.FileWrites;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk fills up under a running hub: the cache's temp-file writes fail half-way with the
 * kernel's ENOSPC message (through {@link FileWrites}, the cache's storage seam). Requests still
 * succeed online, the failed writes are counted, no partial file is left, the previous version is
 * what the hub serves offline, and caching resumes once the disk has room again.
 */
class EdgeHubDiskFullTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration SECOND = Duration.ofSeconds(1);
  private static final String POD = "/api/v1/namespaces/default/pods/web-0";
  private static final String PODS = "/api/v1/namespaces/default/pods";

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final AtomicBoolean diskFull = new AtomicBoolean();
  private final CrudApiServer upstream = CrudApiServer.start();
  private EdgeHub hub;

  /** Writes half of the bytes, then fails the way a full disk does; or writes normally. */
  private final FileWrites writes = (channel, data) -> {
    if (diskFull.get()) {
      ByteBuffer half = data.slice(data.position(), data.remaining() / 2);
      channel.write(half);
      throw new IOException("No space left on device");
    }
    FileWrites.DIRECT.writeFully(channel, data);
  };

  @BeforeEach
  void setUp() throws IOException {
    try (KubernetesClient c = upstream.client()) {
      c.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
          .withName("web-0").withNamespace("default").addToLabels("phase", "1").endMetadata()
          .withNewSpec().addNewContainer().withName("c").withImage("nginx").endContainer()
          .endSpec().build()).create();
    }
    EdgeHubConfig config =
        EdgeHubConfig.defaults(List.of(upstream.url()), dir.resolve("cache"))
            .withPorts(0, 0, 0)
            .withLimits(new Upstreams.Heartbeat(SECOND, SECOND, 1, 1), 250);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry(),
        root -> DiskCache.open(root, writes)).start();
    clock.runDue();
  }

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    upstream.close();
  }

  @Test
  void aFullDiskKeepsThePreviousVersionWhileRequestsStillSucceedOnline() throws Exception {
    assertThat(phase(kubeletGet(POD))).isEqualTo("1");
    assertThat(kubeletGet(PODS).statusCode()).isEqualTo(200);
    Path cached = dir.resolve("cache/kubelet/pods/default/web-0");
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedPhase(cached).equals("1")
        && Files.exists(dir.resolve("cache/kubelet/pods/.list")));

    diskFull.set(true);
    setPhase("2");
    // Online answers do not wait for (or depend on) the cache.
    HttpResponse<String> get = kubeletGet(POD);
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(phase(get)).isEqualTo("2");
    HttpResponse<String> list = kubeletGet(PODS);
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(list.body()).path("items").get(0).path("metadata").path("labels")
        .path("phase").asText()).isEqualTo("2");
    // The object write of the get, the item and the list metadata of the list: all failed.
    await().atMost(Duration.ofSeconds(10)).until(() -> metric("cache_write_failures_total") >= 3);
    assertThat(cachedPhase(cached)).isEqualTo("1");
    assertThat(tempFiles()).isEmpty();

    // Offline, the previous version is served, whole.
    upstream.stop();
    advanceUntilHealth(false);
    HttpResponse<String> offline = kubeletGet(POD);
    assertThat(offline.statusCode()).isEqualTo(200);
    assertThat(phase(offline)).isEqualTo("1");
    HttpResponse<String> offlineList = kubeletGet(PODS);
    assertThat(offlineList.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(offlineList.body()).path("items")).hasSize(1);
    assertThat(metric("cache_corrupt_files_total")).isZero();

    // Room on the disk again: the same answer as before is now stored (a failed write is not
    // remembered as stored).
    diskFull.set(false);
    upstream.startAgain();
    advanceUntilHealth(true);
    assertThat(phase(kubeletGet(POD))).isEqualTo("2");
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedPhase(cached).equals("2"));
    assertThat(tempFiles()).isEmpty();
  }

  private void setPhase(String phase) {
    try (KubernetesClient c = upstream.client()) {
      c.pods().inNamespace("default").withName("web-0").edit(p -> new PodBuilder(p)
          .editMetadata().addToLabels("phase", phase).endMetadata().build());
    }
  }

  private HttpResponse<String> kubeletGet(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.proxyAddress().getPort() + path))
            .header("User-Agent", "kubelet/v1.30 (linux/amd64)").timeout(Duration.ofSeconds(5))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String phase(HttpResponse<String> r) throws IOException {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).path("metadata").path("labels").path("phase").asText();
  }

  /** The phase label in the cached file (after its one-line header), "" when absent. */
  private static String cachedPhase(Path file) throws IOException {
    if (!Files.exists(file)) {
      return "";
    }
    String text = Files.readString(file);
    JsonNode obj = JSON.readTree(text.substring(text.indexOf('\n') + 1));
    return obj.path("metadata").path("labels").path("phase").asText();
  }

  private List<Path> tempFiles() throws IOException {
    try (Stream<Path> all = Files.walk(dir.resolve("cache"))) {
      return all.filter(p -> p.getFileName().toString().startsWith(".tmp-")).toList();
    }
  }

  private double metric(String name) throws Exception {
    HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + hub.serverAddress().getPort() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    return metrics.body().lines()
        .filter(l -> l.startsWith("portage_hub_" + name + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1)))
        .findFirst().orElseThrow();
  }

  private void advanceUntilHealth(boolean healthy) {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (hub.cloudHealthy() == healthy) {
        return true;
      }
      clock.advance(SECOND);
      return false;
    });
  }
}
