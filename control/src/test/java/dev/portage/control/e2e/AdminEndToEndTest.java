package dev.portage.control.e2e;

import static dev.portage.control.e2e.RuleStream.TAG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin listener over real HTTP: readiness, metrics and the status page. */
class AdminEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final Planes planes = new Planes();

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  @Test
  void readyzMetricsAndStatusDescribeTheLivePlane() throws Exception {
    Files.writeString(dir.resolve("tag.yaml"), """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata: {name: shop, namespace: default}
        spec: {key: shop, priority: 1}
        """);
    ControlPlane plane = planes.start(Planes.local().dir(dir).build());
    RuleStream s = RuleStream.open(planes.channel(plane), true);
    s.subscribe(TAG);
    s.next();

    HttpResponse<String> ready = planes.get(plane, "/readyz?verbose");
    assertThat(ready.statusCode()).isEqualTo(200);
    // The Linkerd destination controller's probe paths, as its manifests probe them.
    HttpResponse<String> ping = planes.get(plane, "/ping");
    assertThat(ping.statusCode()).isEqualTo(200);
    assertThat(ping.body()).isEqualTo("pong\n");
    HttpResponse<String> linkerdReady = planes.get(plane, "/ready");
    assertThat(linkerdReady.statusCode()).isEqualTo(200);
    assertThat(linkerdReady.body()).isEqualTo("ok\n");

    String metrics = planes.get(plane, "/metrics").body();
    assertThat(Planes.sample(metrics, "portage_control_store_revision", "")).isEqualTo((double) plane.store().revision());
    assertThat(Planes.sample(metrics, "portage_control_store_objects", "kind=\"" + TAG + "\"")).isEqualTo(1.0);
    assertThat(Planes.sample(metrics, "portage_control_source_synced", "")).isEqualTo(1.0);
    assertThat(Planes.sample(metrics, "portage_control_grpc_connections", "")).isEqualTo(1.0);
    assertThat(Planes.sample(metrics, "portage_rules_connections", "")).isEqualTo(1.0);
    assertThat(Planes.sample(metrics, "portage_rules_pushes_total", "type=\"" + TAG + "\"")).isEqualTo(1.0);
    assertThat(Planes.sample(metrics, "portage_destination_streams", "rpc=\"Get\"")).isEqualTo(0.0);

    HttpResponse<String> status = planes.get(plane, "/status");
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(status.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
    JsonNode json = JSON.readTree(status.body());
    assertThat(json.path("source").asText()).isEqualTo("files:" + dir.toRealPath());
    assertThat(json.path("synced").asBoolean()).isTrue();
    assertThat(json.path("storeRevision").asLong()).isEqualTo(plane.store().revision());
    assertThat(json.path("kinds").path(TAG).path("objects").asInt()).isEqualTo(1);
    assertThat(json.path("kinds").path(TAG).path("revision").asLong()).isEqualTo(plane.store().kindRevision(TAG));
    assertThat(json.path("ruleConnections").asInt()).isEqualTo(1);
    assertThat(json.path("destinationStreams").asInt()).isZero();
    assertThat(json.path("grpcConnections").asInt()).isEqualTo(1);

    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> post = http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + plane.adminAddress().getPort() + "/status"))
              .POST(HttpRequest.BodyPublishers.ofString("x")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).isEqualTo(405);
      assertThat(post.headers().firstValue("allow")).hasValue("GET, HEAD");
    }
    assertThat(planes.get(plane, "/nope").statusCode()).isEqualTo(404);
  }

  @Test
  void notReadyWhileTheKubernetesSourceCannotReachItsApiServer() throws Exception {
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: gone, context: {cluster: gone, user: u}}]
        current-context: gone
        """);
    ControlPlane plane = planes.start(
        Planes.local().source(ControlPlaneConfig.SourceType.KUBERNETES).kubeconfig(kubeconfig).build());

    HttpResponse<String> ready = planes.get(plane, "/readyz");
    assertThat(ready.statusCode()).isEqualTo(503);
    assertThat(ready.body()).contains("[-]source-synced failed").contains("https://127.0.0.1:1");
    assertThat(planes.get(plane, "/healthz").statusCode()).isEqualTo(200);
    HttpResponse<String> linkerdReady = planes.get(plane, "/ready");
    assertThat(linkerdReady.statusCode()).isEqualTo(500);
    assertThat(linkerdReady.body()).isEqualTo("not ready\n");
    assertThat(planes.get(plane, "/ping").body()).isEqualTo("pong\n");
    assertThat(JSON.readTree(planes.get(plane, "/status").body()).path("synced").asBoolean()).isFalse();
    assertThat(Planes.sample(planes.get(plane, "/metrics").body(), "portage_control_source_synced", "")).isZero();
    assertThat(plane.isReady()).isFalse();

    plane.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> plane.store().watchCount() == 0);
  }
}
