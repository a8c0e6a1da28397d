package dev.portage.core.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DashboardIntegrationTest {

  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final List<AdminServer> servers = new ArrayList<>();
  private final FakeClock clock = new FakeClock();

  @AfterEach
  void closeServers() {
    servers.forEach(AdminServer::close);
    client.close();
  }

  private AdminServer start(AdminServer.Builder builder) throws IOException {
    AdminServer server = builder.registry(new PrometheusRegistry()).wallClock(clock).build();
    servers.add(server);
    return server.start();
  }

  private HttpResponse<String> send(AdminServer server, String method, String path)
      throws Exception {
    return client.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.localAddress().getPort() + path))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesThePageScriptAndStyleWithNoExternalUrl() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> page = send(server, "GET", "/dashboard");
    HttpResponse<String> script = send(server, "GET", "/dashboard/app.js");
    HttpResponse<String> style = send(server, "GET", "/dashboard/app.css");

    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
    assertThat(page.headers().firstValue("Content-Security-Policy"))
        .hasValue(StaticAsset.CONTENT_SECURITY_POLICY);
    assertThat(page.body()).contains("src=\"dashboard/app.js\"").contains("id=\"error\"");
    assertThat(script.statusCode()).isEqualTo(200);
    assertThat(script.headers().firstValue("Content-Type"))
        .hasValue("text/javascript; charset=utf-8");
    assertThat(script.body()).contains("fetch('dashboard/state'");
    assertThat(style.headers().firstValue("Content-Type")).hasValue("text/css; charset=utf-8");
    for (HttpResponse<String> r : List.of(page, script, style)) {
      assertThat(r.body()).doesNotContain("http://").doesNotContain("https://").doesNotContain("//cdn");
    }
  }

  @Test
  void stateRendersTheSourceAfreshOnEveryRequest() throws Exception {
    AtomicLong bytes = new AtomicLong(10);
    AdminServer server =
        start(
            AdminServer.builder()
                .dashboard(
                    "tunnel-server",
                    view -> {
                      view.fields("Summary").put("bytes", bytes.get()).put("ready", true);
                      view.table("Agents", "agent", "identifiers").row("a1", List.of("host=x"));
                    }));

    DashboardJson first = DashboardJson.parse(send(server, "GET", "/dashboard/state").body());
    bytes.set(25);
    clock.advance(Duration.ofSeconds(3));
    HttpResponse<String> second = send(server, "GET", "/dashboard/state");

    assertThat(first.component()).isEqualTo("tunnel-server");
    assertThat(first.time()).isEqualTo("2026-01-01T00:00:00Z");
    assertThat(first.fields("Summary")).containsEntry("bytes", 10L).containsEntry("ready", true);
    assertThat(first.rows("Agents"))
        .containsExactly(Map.of("agent", "a1", "identifiers", List.of("host=x")));
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.headers().firstValue("Content-Type"))
        .hasValue("application/json; charset=utf-8");
    assertThat(second.headers().firstValue("Cache-Control")).hasValue("no-store");
    DashboardJson later = DashboardJson.parse(second.body());
    assertThat(later.fields("Summary")).containsEntry("bytes", 25L);
    assertThat(later.time()).isEqualTo("2026-01-01T00:00:03Z");
  }

  @Test
  void readinessChecksAppearAsTheLastTable() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck("informers", HealthCheck.Result::ok)
                .readinessCheck("agents", () -> HealthCheck.Result.failed("no agent connected"))
                .dashboard("x", view -> view.fields("Summary").put("n", 1)));

    DashboardJson state = DashboardJson.parse(send(server, "GET", "/dashboard/state").body());

    assertThat(state.titles()).containsExactly("Summary", "Readiness");
    assertThat(state.rows("Readiness"))
        .containsExactly(
            Map.of("check", "informers", "ok", true, "reason", ""),
            Map.of("check", "agents", "ok", false, "reason", "no agent connected"));
  }

  @Test
  void aServerWithoutSourceOrChecksShowsAnEmptyAdminState() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> response = send(server, "GET", "/dashboard/state");

    assertThat(response.body())
        .isEqualTo("{\"component\":\"admin\",\"time\":\"2026-01-01T00:00:00Z\",\"sections\":[]}");
  }

  @Test
  void aFailingSourceIsAnswered500WithItsMessage() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .dashboard(
                    "x",
                    view -> {
                      throw new IllegalStateException("registry unavailable");
                    }));

    HttpResponse<String> response = send(server, "GET", "/dashboard/state");

    assertThat(response.statusCode()).isEqualTo(500);
    assertThat(response.body()).isEqualTo("internal error: registry unavailable\n");
  }

  @Test
  void dashboardRoutesAreReadOnlyAndListedInTheIndex() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> post = send(server, "POST", "/dashboard/state");
    HttpResponse<String> index = send(server, "GET", "/");
    HttpResponse<String> unknown = send(server, "GET", "/dashboard/nope");

    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
    assertThat(index.body()).contains("/dashboard\n").contains("/dashboard/state\n");
    assertThat(unknown.statusCode()).isEqualTo(404);
  }

  @Test
  void builderRefusesABlankComponentName() {
    assertThatThrownBy(() -> AdminServer.builder().dashboard(" ", view -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("component: ' ' (expected: non-blank)");
  }
}
