package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The balancer and retry-budget gauges as an operator sees them: scraped from the admin /metrics. */
class SidecarMetricsIntegrationTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  final HttpClient http = HttpClient.newHttpClient();
  final ExecutorService clients = Executors.newSingleThreadExecutor();
  MeshFixture mesh;

  @AfterEach
  void stop() throws Exception {
    clients.shutdownNow();
    mesh.close();
    http.close();
  }

  private String scrape() throws Exception {
    HttpResponse<String> r = http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mesh.sidecar.adminAddress().getPort() + "/metrics"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  /** The value of the sample {@code name{labels}} in the exposition text, or NaN when absent. */
  private static double sample(String text, String name, String labels) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name + "{" + labels + "}") + " (\\S+)$").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
  }

  /** The value of the one sample of {@code name} carrying every label pair given ({@code k="v"}), or NaN. */
  private static double sampleWith(String text, String name, String... pairs) {
    double found = Double.NaN;
    for (String line : text.split("\n")) {
      if (!line.startsWith(name + "{")) {
        continue;
      }
      String labels = line.substring(name.length() + 1, line.lastIndexOf('}'));
      java.util.List<String> have = java.util.Arrays.asList(labels.split(","));
      if (have.containsAll(java.util.List.of(pairs))) {
        assertThat(found).as("one sample of %s with %s", name, java.util.List.of(pairs)).isNaN();
        found = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return found;
  }

  private HttpResponse<String> admin(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mesh.sidecar.adminAddress().getPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String labels(String endpoint) {
    return "authority=\"" + WEB + "\",endpoint=\"" + endpoint + "\"";
  }

  @Test
  void ewmaEstimateAndInFlightPerEndpointAndBudgetPerAuthorityAfterTraffic() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    mesh.service("web");
    Backend a = mesh.backend("a");
    CountDownLatch release = new CountDownLatch(1);
    a.behaviour = ex -> {
      if (ex.getRequestURI().getPath().equals("/held")) {
        release.await(10, TimeUnit.SECONDS);
      }
      Backend.reply(ex, 200, "ok");
    };
    mesh.endpoints("web", a);
    mesh.profile("web", """
        routes:
        - name: all
          condition: {pathRegex: /.*}
          isRetryable: true
        retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 10s}
        """);
    await().atMost(10, TimeUnit.SECONDS).until(() -> {
      mesh.sidecar.profiles().get(WEB);
      return mesh.sidecar.profiles().peek(WEB).routes().size() == 1;
    });
    String ep = "127.0.0.1:" + a.port();

    assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/").status()).isEqualTo(200);
    Future<RawHttp.Response> held =
        clients.submit(() -> RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/held"));
    await().atMost(10, TimeUnit.SECONDS).until(() -> sample(scrape(), "portage_sidecar_endpoint_in_flight", labels(ep)) == 1.0);

    String text = scrape();
    // The fake clock stood still, so the estimate is the real RTT of the first request (a peak over
    // the 30 ms default would replace it; a lower one blends with weight 0): 30 ms.
    assertThat(sample(text, "portage_sidecar_endpoint_ewma_seconds", labels(ep))).isEqualTo(0.030);
    // Reserve 10/s × 10 s = 100 retries, plus 2 deposits × 0.2.
    assertThat(sample(text, "portage_sidecar_retry_budget_available", "authority=\"" + WEB + "\"")).isEqualTo(100.0);

    release.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
    await().atMost(10, TimeUnit.SECONDS).until(() -> sample(scrape(), "portage_sidecar_endpoint_in_flight", labels(ep)) == 0.0);
  }

  @Test
  void ewmaEstimateDecaysWithTime() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    mesh.service("web");
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    String ep = "127.0.0.1:" + a.port();
    assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/").status()).isEqualTo(200);
    assertThat(sample(scrape(), "portage_sidecar_endpoint_ewma_seconds", labels(ep))).isEqualTo(0.030);

    clock.advance(java.time.Duration.ofSeconds(10)); // one decay time constant

    assertThat(sample(scrape(), "portage_sidecar_endpoint_ewma_seconds", labels(ep)))
        .isCloseTo(0.030 / Math.E, org.assertj.core.data.Offset.offset(1e-9));
  }

  @Test
  void roundRobinExportsInFlightButNoEwma() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.ROUND_ROBIN);
    mesh.service("web");
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/").status()).isEqualTo(200);

    String text = scrape();
    String ep = "127.0.0.1:" + a.port();
    assertThat(sample(text, "portage_sidecar_endpoint_in_flight", labels(ep))).isEqualTo(0.0);
    assertThat(text).doesNotContain("portage_sidecar_endpoint_ewma_seconds{");
  }

  @Test
  void requestsAndLatencyPerRouteAndEndpointByStatusClass() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    mesh.service("web");
    Backend a = mesh.backend("a");
    a.behaviour = ex -> Backend.reply(ex, ex.getRequestURI().getPath().equals("/fail") ? 503 : 200, "x");
    mesh.endpoints("web", a);
    String ep = "127.0.0.1:" + a.port();
    // Data points are cached after the first request: later ones must land on the same series.
    for (String path : new String[] {"/", "/fail", "/", "/"}) {
      RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, path);
    }

    String text = scrape();
    String route = "authority=\"" + WEB + "\",route=\"default\"";
    assertThat(sample(text, "portage_sidecar_route_requests_total", route + ",status_class=\"2xx\"")).isEqualTo(3.0);
    assertThat(sample(text, "portage_sidecar_route_requests_total", route + ",status_class=\"5xx\"")).isEqualTo(1.0);
    assertThat(sample(text, "portage_sidecar_route_response_latency_seconds_count", route)).isEqualTo(4.0);
    assertThat(sample(text, "portage_sidecar_endpoint_requests_total", labels(ep) + ",status_class=\"2xx\"")).isEqualTo(3.0);
    assertThat(sample(text, "portage_sidecar_endpoint_requests_total", labels(ep) + ",status_class=\"5xx\"")).isEqualTo(1.0);
    assertThat(sample(text, "portage_sidecar_endpoint_response_latency_seconds_count", labels(ep))).isEqualTo(4.0);
    // No series before its first count (no retries here).
    assertThat(text).doesNotContain("portage_sidecar_route_retries_total{");
  }

  @Test
  void eachRequestOfAKeepAliveConnectionCountsUnderItsOwnAuthorityAndRoute() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    mesh.service("web");
    mesh.service("api");
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    mesh.endpoints("api", a);
    String api = authority("api");
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", mesh.sidecar.outboundAddress().getPort())) {
      s.setSoTimeout(10_000);
      assertThat(exchange(s, WEB, "/named")).isEqualTo(200);
      // A profile arrives while the connection is open: its route takes the next requests.
      mesh.profile("web", """
          routes:
          - name: named
            condition: {pathRegex: /named}
          """);
      await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.profiles().peek(WEB).routes().size() == 1);
      for (String[] request : new String[][] {{WEB, "/named"}, {WEB, "/other"}, {api, "/named"}, {WEB, "/named"}}) {
        assertThat(exchange(s, request[0], request[1])).isEqualTo(200);
      }
    }

    String text = scrape();
    String total = "portage_sidecar_route_requests_total";
    String ok = ",status_class=\"2xx\"";
    assertThat(sample(text, total, "authority=\"" + WEB + "\",route=\"named\"" + ok)).isEqualTo(2.0);
    assertThat(sample(text, total, "authority=\"" + WEB + "\",route=\"default\"" + ok)).isEqualTo(2.0);
    assertThat(sample(text, total, "authority=\"" + api + "\",route=\"default\"" + ok)).isEqualTo(1.0);
    assertThat(sample(text, "portage_sidecar_route_response_latency_seconds_count",
        "authority=\"" + WEB + "\",route=\"named\"")).isEqualTo(2.0);
  }

  /** One request on the open connection {@code s}; its response's status. */
  private static int exchange(java.net.Socket s, String authority, String path) throws Exception {
    s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    return RawHttp.read(s.getInputStream()).status();
  }

  @Test
  void linkerdProbePathsAnswerAsLinkerdsProxyDoes() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    HttpResponse<String> live = admin("/live");
    assertThat(live.statusCode()).isEqualTo(200);
    assertThat(live.body()).isEqualTo("live\n");
    HttpResponse<String> ready = admin("/ready");
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.body()).isEqualTo("ready\n");
    assertThat(admin("/readyz").statusCode()).isEqualTo(200);
  }

  @Test
  void linkerdProxyMetricsClassifyByStatusAndGrpcStatus() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.ROUND_ROBIN);
    mesh.service("web");
    mesh.service("rpc");
    Backend a = mesh.backend("a");
    a.behaviour = ex -> Backend.reply(ex, ex.getRequestURI().getPath().equals("/fail") ? 503 : 200, "x");
    mesh.endpoints("web", a);
    try (ScriptedBackend rpc = new ScriptedBackend(() -> ScriptedBackend.chunkedWithTrailers("", "grpc-status: 14"))) {
      mesh.endpoint("rpc", "r", rpc.port());
      for (String path : new String[] {"/", "/fail", "/", "/"}) {
        RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, path);
      }
      String rpcAuthority = MeshFixture.authority("rpc");
      assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "POST", rpcAuthority, "/pkg.Svc/Call", new byte[5],
          "content-type: application/grpc").status()).isEqualTo(200);

      String web = "authority=\"" + WEB + "\"";
      String target = "target_addr=\"127.0.0.1:" + a.port() + "\"";
      String rpcTarget = "target_addr=\"127.0.0.1:" + rpc.port() + "\"";
      await().atMost(10, TimeUnit.SECONDS).until(() ->
          sampleWith(scrape(), "response_total", rpcTarget, "grpc_status=\"14\"") == 1.0);
      String text = scrape();
      String[] outbound = {"direction=\"outbound\"", web, target, "target_ip=\"127.0.0.1\"",
          "target_port=\"" + a.port() + "\"", "tls=\"disabled\""};
      assertThat(sampleWith(text, "request_total", outbound)).isEqualTo(4.0);
      assertThat(sampleWith(text, "response_total", web, "status_code=\"200\"", "classification=\"success\"",
          "grpc_status=\"\"", "error=\"\"")).isEqualTo(3.0);
      assertThat(sampleWith(text, "response_total", web, "status_code=\"503\"", "classification=\"failure\""))
          .isEqualTo(1.0);
      assertThat(sampleWith(text, "response_latency_ms_count", web, "status_code=\"200\"")).isEqualTo(3.0);
      assertThat(sampleWith(text, "response_latency_ms_bucket", web, "status_code=\"200\"", "le=\"+Inf\""))
          .isEqualTo(3.0);
      assertThat(text).contains("le=\"50000.0\"");
      // An HTTP 200 whose trailers say UNAVAILABLE is a gRPC failure.
      assertThat(sampleWith(text, "response_total", rpcTarget, "status_code=\"200\"", "classification=\"failure\"",
          "grpc_status=\"14\"")).isEqualTo(1.0);
      assertThat(sampleWith(text, "outbound_http_balancer_endpoints", web, "endpoint_state=\"ready\"")).isEqualTo(1.0);
      assertThat(sampleWith(text, "outbound_http_balancer_endpoints", web, "endpoint_state=\"pending\"")).isEqualTo(0.0);
      assertThat(sample(text, "portage_sidecar_endpoint_ready", labels("127.0.0.1:" + a.port()))).isEqualTo(1.0);
    }
  }

  @Test
  void aRequestIsGrpcByItsFirstContentTypeWhateverItsCaseOrPlaceAmongTheHeaders() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.ROUND_ROBIN);
    mesh.service("rpc");
    try (ScriptedBackend rpc = new ScriptedBackend(() -> ScriptedBackend.chunkedWithTrailers("", "grpc-status: 14"))) {
      mesh.endpoint("rpc", "r", rpc.port());
      String rpcAuthority = MeshFixture.authority("rpc");
      String[][] requests = {
          {"User-Agent: t", "Content-Type: Application/GRPC+proto"}, // gRPC: its trailers count
          {"content-type: text/plain", "content-type: application/grpc"}, // the first one decides
          {"User-Agent: t"}}; // no content type at all
      for (String[] headers : requests) {
        assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "POST", rpcAuthority, "/pkg.Svc/Call", new byte[5],
            headers).status()).isEqualTo(200);
      }

      String rpcTarget = "target_addr=\"127.0.0.1:" + rpc.port() + "\"";
      await().atMost(10, TimeUnit.SECONDS).until(() ->
          sampleWith(scrape(), "response_total", rpcTarget, "status_code=\"200\"", "classification=\"success\"") == 2.0);
      String text = scrape();
      assertThat(sampleWith(text, "response_total", rpcTarget, "status_code=\"200\"", "classification=\"failure\"",
          "grpc_status=\"14\"")).isEqualTo(1.0);
      assertThat(sampleWith(text, "response_total", rpcTarget, "classification=\"success\"", "grpc_status=\"\""))
          .isEqualTo(2.0);
    }
  }
}
