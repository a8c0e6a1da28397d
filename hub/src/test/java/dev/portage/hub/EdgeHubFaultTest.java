package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults between the hub and the fabric8 mock API server (CRUD mode), on real sockets: an upstream
 * that flaps, a watch client that stops reading, corrupt cache files, names that try to leave the
 * cache directory, and a 10 MiB object. Health checks run on a {@link FakeClock}; nothing sleeps.
 */
class EdgeHubFaultTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  // One server for every incarnation of the upstream: it keeps the stored objects.
  private final CrudApiServer upstream = CrudApiServer.start();
  private EdgeHub hub;

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    upstream.close();
  }

  private void stopUpstream() {
    upstream.stop();
  }

  private EdgeHub startHub(Upstreams.Heartbeat heartbeat) throws IOException {
    EdgeHubConfig config =
        EdgeHubConfig.defaults(List.of(upstream.url()), dir.resolve("cache"))
            .withPorts(0, 0, 0)
            .withLimits(heartbeat, 250);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
    return hub;
  }

  private static Pod pod(String name, String phase) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default")
        .addToLabels("phase", phase).endMetadata()
        .withNewSpec().withNodeName("node-1").addNewContainer().withName("c").withImage("nginx")
        .endContainer().endSpec().build();
  }

  private KubernetesClient direct() {
    return upstream.client();
  }

  private HttpResponse<String> get(String path, String userAgent) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + hub.proxyAddress().getPort() + path))
            .header("User-Agent", userAgent).timeout(REQUEST_TIMEOUT).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> kubeletGet(String path) throws Exception {
    return get(path, "kubelet/v1.30 (linux/amd64)");
  }

  /** Advances the fake clock one probe interval at a time until the hub's view is {@code healthy}. */
  private void advanceUntilHealth(boolean healthy, Duration interval) {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (hub.cloudHealthy() == healthy) {
        return true;
      }
      clock.advance(interval);
      return false;
    });
  }

  /** Waits until the kubelet's cached copy of pod {@code name} has label phase={@code phase}. */
  private void awaitCached(String name, String phase) {
    Path file = dir.resolve("cache/kubelet/pods/default").resolve(name);
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file)
        && Files.readString(file).contains("\"phase\":\"" + phase + "\""));
  }

  private static String phaseOf(String podJson) throws IOException {
    return JSON.readTree(podJson).path("metadata").path("labels").path("phase").asText();
  }

  @Test
  void upstreamFlappingEverySecondNeverHangsAndEachAnswerComesFromUpstreamOrCache()
      throws Exception {
    Duration second = Duration.ofSeconds(1);
    try (KubernetesClient c = direct()) {
      c.pods().inNamespace("default").resource(pod("flappy", "0")).create();
    }
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));
    String path = "/api/v1/namespaces/default/pods/flappy";
    HttpResponse<String> first = kubeletGet(path);
    assertThat(first.statusCode()).isEqualTo(200);
    String cachedPhase = phaseOf(first.body());
    awaitCached("flappy", cachedPhase);

    for (int flap = 1; flap <= 6; flap++) {
      boolean online = flap % 2 == 0;
      String phase = Integer.toString(flap);
      if (online) {
        upstream.startAgain();
        try (KubernetesClient c = direct()) {
          c.pods().inNamespace("default").withName("flappy")
              .edit(p -> new PodBuilder(p).editMetadata().addToLabels("phase", phase)
                  .endMetadata().build());
        }
      } else {
        stopUpstream();
      }
      // Right after the flip, before the health checks noticed: answered, never hung, and either
      // the upstream's current object or the cached one.
      HttpResponse<String> racing = kubeletGet(path);
      assertThat(racing.statusCode()).as("flap %d: %s", flap, racing.body()).isEqualTo(200);
      assertThat(phaseOf(racing.body())).isIn(cachedPhase, online ? phase : cachedPhase);
      cachedPhase = phaseOf(racing.body());

      // One second later the hub agrees with reality: online answers come from the upstream.
      advanceUntilHealth(online, second);
      HttpResponse<String> settled = kubeletGet(path);
      assertThat(settled.statusCode()).isEqualTo(200);
      assertThat(phaseOf(settled.body())).isEqualTo(online ? phase : cachedPhase);
      cachedPhase = phaseOf(settled.body());
      awaitCached("flappy", cachedPhase); // cache writes are asynchronous
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.inFlight() == 0);
  }

  @Test
  void aWatchClientThatStopsReadingDoesNotStallOthersOrBufferWithoutBound() throws Exception {
    // 8 MiB of watch events, more than the socket buffers between the hub and the client (4 MiB).
    StringBuilder events = new StringBuilder();
    String filler = "x".repeat(4000);
    for (int i = 0; events.length() < 8 * 1024 * 1024; i++) {
      events.append("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
          + "\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"resourceVersion\":\"")
          .append(i).append("\",\"annotations\":{\"f\":\"").append(filler).append("\"}}}}\n");
    }
    upstream.server().expect().get().withPath("/api/v1/namespaces/default/pods?watch=true")
        .andReturn(200, events.toString()).once();
    try (KubernetesClient c = direct()) {
      c.pods().inNamespace("default").resource(pod("other", "1")).create();
    }
    startHub(Upstreams.Heartbeat.defaults());
    int before = hub.openConnections();

    try (Socket slow = new Socket()) {
      // A small, fixed receive window (set before connecting, so the kernel does not autotune it).
      slow.setReceiveBufferSize(16 * 1024);
      slow.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(),
          hub.proxyAddress().getPort()));
      OutputStream out = slow.getOutputStream();
      // Not a cached component: this test is about the relay, not about cache writes.
      out.write(("GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: hub\r\n"
          + "User-Agent: slow-watcher/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      // The client never reads: once the socket buffers are full, the hub's write stays pending.
      await().atMost(Duration.ofSeconds(20)).until(() -> hub.pendingWriteBytes() > 0);

      HttpResponse<String> other = get("/api/v1/namespaces/default/pods/other", "kubectl/v1.32");
      assertThat(other.statusCode()).isEqualTo(200);
      assertThat(other.body()).contains("\"other\"");
      // Backpressure: the hub stopped reading the upstream, so it holds at most one read's worth.
      // (The messages of one upstream read wait unflushed until the read ends: pending bytes may
      // be seen for a moment before the socket buffers are full, so wait for the steady state.)
      await().atMost(Duration.ofSeconds(20)).until(() -> hub.pendingWriteBytes() > 0);
      assertThat(hub.pendingWriteBytes()).isLessThan(1024 * 1024);
    }
    // The slow client's connection and its pending bytes are gone (the other client keeps its
    // keep-alive connection).
    await().atMost(Duration.ofSeconds(10))
        .until(() -> hub.pendingWriteBytes() == 0 && hub.openConnections() <= before + 1);
  }

  @Test
  void corruptAndTruncatedCacheFilesAreSkippedCountedAndNeverServed() throws Exception {
    try (KubernetesClient c = direct()) {
      for (String name : List.of("good", "corrupt", "truncated")) {
        c.pods().inNamespace("default").resource(pod(name, "1")).create();
      }
    }
    Duration second = Duration.ofSeconds(1);
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));
    assertThat(kubeletGet("/api/v1/namespaces/default/pods").statusCode()).isEqualTo(200);
    Path pods = dir.resolve("cache/kubelet/pods/default");
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(pods.resolve("truncated")));

    byte[] corrupt = Files.readAllBytes(pods.resolve("corrupt"));
    corrupt[corrupt.length - 5] ^= 0x20; // one flipped bit in the JSON
    Files.write(pods.resolve("corrupt"), corrupt);
    byte[] truncated = Files.readAllBytes(pods.resolve("truncated"));
    Files.write(pods.resolve("truncated"), java.util.Arrays.copyOf(truncated, truncated.length / 2));

    stopUpstream();
    advanceUntilHealth(false, second);
    HttpResponse<String> list = kubeletGet("/api/v1/namespaces/default/pods");
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(itemNames(list.body())).containsExactly("good");
    assertThat(kubeletGet("/api/v1/namespaces/default/pods/corrupt").statusCode()).isEqualTo(404);
    assertThat(kubeletGet("/api/v1/namespaces/default/pods/truncated").statusCode()).isEqualTo(404);
    assertThat(kubeletGet("/api/v1/namespaces/default/pods/good").statusCode()).isEqualTo(200);

    assertThat(metric("portage_hub_cache_corrupt_files_total")).isGreaterThanOrEqualTo(4.0);
  }

  @Test
  void plantedFilesTheHubNeverWroteAreAnsweredAsAbsentCountedAndLoggedWithoutHanging()
      throws Exception {
    try (KubernetesClient c = direct()) {
      c.pods().inNamespace("default").resource(pod("good", "1")).create();
    }
    Duration second = Duration.ofSeconds(1);
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));
    assertThat(kubeletGet("/api/v1/namespaces/default/pods").statusCode()).isEqualTo(200);
    Path pods = dir.resolve("cache/kubelet/pods/default");
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(pods.resolve("good")));

    // 400 MB behind a header that promises every byte of it: sparse, so nothing is held in this
    // JVM or written to disk; a reader that trusted it would allocate 400 MB per request.
    long body = 400L * 1024 * 1024;
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(pods.resolve("huge").toFile(), "rw")) {
      f.write(("PCACHE2 json " + body + " 0 1\n").getBytes(StandardCharsets.US_ASCII));
      f.setLength(f.getFilePointer() + body);
    }
    Files.writeString(pods.resolve("badheader"), "not a cache file\n{\"kind\":\"Pod\"}");
    Files.writeString(pods.resolve("truncated"), "PCACHE2 protobuf 4096 0 1\nk8s");
    // A FIFO: opening it for reading would block until a writer comes, i.e. forever.
    Process mkfifo = new ProcessBuilder("mkfifo", pods.resolve("fifo").toString()).start();
    assertThat(mkfifo.waitFor()).as("mkfifo").isZero();

    ch.qos.logback.classic.Logger cacheLog = (ch.qos.logback.classic.Logger)
        org.slf4j.LoggerFactory.getLogger(dev.portage.hub.cache.DiskCache.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs =
        new ch.qos.logback.core.read.ListAppender<>();
    logs.start();
    cacheLog.addAppender(logs);
    try {
      stopUpstream();
      advanceUntilHealth(false, second);
      // Every request answers within REQUEST_TIMEOUT: absent objects are 404, the list holds the
      // one object the hub wrote, in JSON and in protobuf.
      for (String name : List.of("huge", "badheader", "truncated", "fifo")) {
        HttpResponse<String> r = kubeletGet("/api/v1/namespaces/default/pods/" + name);
        assertThat(r.statusCode()).as(name).isEqualTo(404);
        assertThat(r.body()).as(name).contains("\"reason\":\"NotFound\"");
      }
      HttpResponse<String> list = kubeletGet("/api/v1/namespaces/default/pods");
      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(itemNames(list.body())).containsExactly("good");
      HttpResponse<byte[]> proto = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + hub.proxyAddress().getPort() + "/api/v1/namespaces/default/pods"))
          .header("User-Agent", "kubelet/v1.30 (linux/amd64)")
          .header("Accept", "application/vnd.kubernetes.protobuf,application/json")
          .timeout(REQUEST_TIMEOUT).build(), HttpResponse.BodyHandlers.ofByteArray());
      assertThat(proto.statusCode()).isEqualTo(200);
      assertThat(proto.headers().firstValue("Content-Type"))
          .hasValue("application/vnd.kubernetes.protobuf");
      assertThat(new String(proto.body(), StandardCharsets.ISO_8859_1)).contains("good")
          .doesNotContain("badheader");
    } finally {
      cacheLog.detachAppender(logs);
    }
    assertThat(logs.list).filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
        .extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).contains("huge").contains("more than the hub writes"))
        .anySatisfy(m -> assertThat(m).contains("badheader").contains("malformed header"))
        .anySatisfy(m -> assertThat(m).contains("truncated").contains("truncated"))
        .anySatisfy(m -> assertThat(m).contains("fifo").contains("not a regular file"));
    assertThat(metric("portage_hub_cache_corrupt_files_total")).isGreaterThanOrEqualTo(8.0);
  }

  @Test
  void namesWithDotsAndSlashesStayInsideTheCacheDirectory() throws Exception {
    String evil = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"../../../escaped\","
        + "\"namespace\":\"../..\",\"resourceVersion\":\"7\"}}";
    upstream.server().expect().get().withPath("/api/v1/namespaces/default/pods/trick")
        .andReturn(200, evil).always();
    upstream.server().expect().get().withPath("/api/v1/namespaces/default/pods/trick2")
        .andReturn(200, evil.replace("../../../escaped", "a/../../b")).always();
    Duration second = Duration.ofSeconds(1);
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));

    assertThat(kubeletGet("/api/v1/namespaces/default/pods/trick").body()).isEqualTo(evil);
    assertThat(kubeletGet("/api/v1/namespaces/default/pods/trick2").statusCode()).isEqualTo(200);
    Path cache = dir.resolve("cache");
    await().atMost(Duration.ofSeconds(10)).until(() -> countFiles(cache) >= 2);
    // Every file the hub wrote is under the cache root; nothing named after the payload escaped.
    try (Stream<Path> all = Files.walk(dir)) {
      List<Path> outside = all.filter(Files::isRegularFile)
          .filter(p -> !p.startsWith(cache)).toList();
      assertThat(outside).isEmpty();
    }
    assertThat(dir.getParent().resolve("escaped")).doesNotExist();
    assertThat(dir.resolve("escaped")).doesNotExist();

    // Offline, the objects come back under their own (odd) names, from inside the cache.
    stopUpstream();
    advanceUntilHealth(false, second);
    HttpResponse<String> list = kubeletGet("/api/v1/pods");
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(itemNames(list.body())).containsExactlyInAnyOrder("../../../escaped", "a/../../b");
  }

  /** The value of an unlabelled metric on the hub server's /metrics. */
  private double metric(String name) throws Exception {
    HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + hub.serverAddress().getPort() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    return metrics.body().lines().filter(l -> l.startsWith(name + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst()
        .orElseThrow(() -> new AssertionError(name + " not on /metrics"));
  }

  private static List<String> itemNames(String list) throws IOException {
    List<String> names = new java.util.ArrayList<>();
    for (JsonNode item : JSON.readTree(list).path("items")) {
      names.add(item.path("metadata").path("name").asText());
    }
    return names;
  }

  private static long countFiles(Path root) throws IOException {
    try (Stream<Path> all = Files.walk(root)) {
      return all.filter(Files::isRegularFile)
          .filter(p -> !p.getFileName().toString().startsWith(".")).count();
    }
  }

  @Test
  void aTenMebibyteObjectIsProxiedCachedAndServedOffline() throws Exception {
    String big = "y".repeat(10 * 1024 * 1024);
    try (KubernetesClient c = direct()) {
      c.pods().inNamespace("default").resource(new PodBuilder(pod("big", "1")).editMetadata()
          .addToAnnotations("payload", big).endMetadata().build()).create();
    }
    Duration second = Duration.ofSeconds(1);
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));
    HttpResponse<String> online = kubeletGet("/api/v1/namespaces/default/pods/big");
    assertThat(online.statusCode()).isEqualTo(200);
    assertThat(online.body().length()).isGreaterThan(10 * 1024 * 1024);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> Files.exists(dir.resolve("cache/kubelet/pods/default/big")));

    stopUpstream();
    advanceUntilHealth(false, second);
    HttpResponse<String> offline = kubeletGet("/api/v1/namespaces/default/pods/big");
    assertThat(offline.statusCode()).isEqualTo(200);
    JsonNode obj = JSON.readTree(offline.body());
    assertThat(obj.path("metadata").path("annotations").path("payload").asText()).isEqualTo(big);
    assertThat(obj).isEqualTo(JSON.readTree(online.body()));
  }

  @Test
  void cacheOfAnotherComponentIsNotServedToAComponentThatIsNotCached() throws Exception {
    try (KubernetesClient c = direct()) {
      c.pods().inNamespace("default").resource(pod("mine", "1")).create();
    }
    Duration second = Duration.ofSeconds(1);
    startHub(new Upstreams.Heartbeat(second, second, 1, 1));
    assertThat(kubeletGet("/api/v1/namespaces/default/pods/mine").statusCode()).isEqualTo(200);
    stopUpstream();
    advanceUntilHealth(false, second);
    HttpResponse<String> r = get("/api/v1/namespaces/default/pods/mine", "curl/8.0");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("\"kind\":\"Status\"").contains("--cache-agents");
    assertThat(Set.of(kubeletGet("/api/v1/namespaces/default/pods/mine").statusCode()))
        .containsExactly(200);
  }
}
