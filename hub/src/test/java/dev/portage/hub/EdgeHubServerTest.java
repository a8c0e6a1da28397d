package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.remote.Upstreams;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub server port, the in-flight limit, credentials pass-through and metrics. */
class EdgeHubServerTest {

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private KubernetesMockServer upstream;
  private EdgeHub hub;

  @BeforeEach
  void setUp() throws Exception {
    upstream = new KubernetesMockServer(false);
    upstream.start();
    upstream.expect().get().withPath("/api/v1/namespaces/default/pods/slow")
        .andReturn(200, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"slow\"}}").always();
    upstream.expect().get().delay(3, TimeUnit.SECONDS).withPath("/api/v1/namespaces/default/pods/held")
        .andReturn(200, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"held\"}}").once();
    upstream.expect().get().delay(8, TimeUnit.SECONDS).withPath("/api/v1/namespaces/default/pods/stuck")
        .andReturn(200, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"stuck\"}}").once();
    EdgeHubConfig config =
        EdgeHubConfig.defaults(List.of(upstream.url("/").replaceAll("/$", "")), dir)
            .withPorts(0, 0, 0)
            .withLimits(Upstreams.Heartbeat.defaults(), 1);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
  }

  @AfterEach
  void tearDown() {
    hub.close();
    MockApiServers.destroy(upstream);
  }

  private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return http.send(b.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private URI hubServer(String path) {
    return URI.create("http://127.0.0.1:" + hub.serverAddress().getPort() + path);
  }

  private URI proxy(String path) {
    return URI.create("http://127.0.0.1:" + hub.proxyAddress().getPort() + path);
  }

  @Test
  void healthzReadyzAndMetrics() throws Exception {
    HttpResponse<String> healthz = send(HttpRequest.newBuilder(hubServer("/v1/healthz")));
    assertThat(healthz.statusCode()).isEqualTo(200);
    assertThat(healthz.body()).isEqualTo("OK");
    assertThat(send(HttpRequest.newBuilder(hubServer("/v1/readyz"))).statusCode()).isEqualTo(200);
    send(HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/slow")).header("User-Agent", "kubelet/1"));
    // The cache write runs on the writer thread after the answer.
    await().atMost(Duration.ofSeconds(10)).until(() -> send(HttpRequest.newBuilder(hubServer("/metrics")))
        .body().contains("portage_hub_cache_size_bytes{component=\"kubelet\"}"));
    String metrics = send(HttpRequest.newBuilder(hubServer("/metrics"))).body();
    assertThat(metrics).contains(
        "portage_hub_upstream_healthy{server=\"" + upstream.url("/").replaceAll("/$", "") + "\"} 1.0",
        "portage_hub_requests_total{code=\"200\",resource=\"pods\",verb=\"get\"} 1.0",
        "portage_hub_inflight_requests 0.0",
        "portage_hub_served_from_cache_total 0.0",
        "portage_hub_rejected_requests_total 0.0");
  }

  @Test
  void tokenIsUpdatedAndSentOnlyWhenTheCallerHasNoCredentials() throws Exception {
    assertThat(send(HttpRequest.newBuilder(hubServer("/v1/token"))).statusCode()).isEqualTo(405);
    HttpResponse<String> bad = send(HttpRequest.newBuilder(hubServer("/v1/token"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"nope\":1}")));
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("expected: a JSON body {\"token\": \"<bootstrap token>\"}");
    HttpResponse<String> ok = send(HttpRequest.newBuilder(hubServer("/v1/token"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"token\":\"abcdef.0123456789abcdef\"}")));
    assertThat(ok.statusCode()).isEqualTo(200);

    drainRecorded();
    send(HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/slow")));
    assertThat(takePodRequest().getHeader("Authorization")).isEqualTo("Bearer abcdef.0123456789abcdef");
    send(HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/slow"))
        .header("Authorization", "Bearer caller"));
    assertThat(takePodRequest().getHeader("Authorization")).isEqualTo("Bearer caller");
  }

  private void drainRecorded() throws InterruptedException {
    while (upstream.takeRequest(10, TimeUnit.MILLISECONDS) != null) {
      // requests before the token update (health probes included)
    }
  }

  private RecordedRequest takePodRequest() throws InterruptedException {
    while (true) {
      RecordedRequest r = upstream.takeRequest(10, TimeUnit.SECONDS);
      assertThat(r).isNotNull();
      if (r.getPath().contains("/pods/")) {
        return r;
      }
    }
  }

  @Test
  void requestsOverTheInFlightLimitGet429ButWatchesAreNotCounted() throws Exception {
    CompletableFuture<HttpResponse<String>> held = http.sendAsync(
        HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/held"))
            .timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.inFlight() == 1);

    HttpResponse<String> refused = send(HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/slow")));
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).contains("1");
    assertThat(refused.body()).contains("\"reason\":\"TooManyRequests\"");

    // A watch is long-running: not counted, not refused (the mock answers it with its own body).
    HttpResponse<String> watch = send(HttpRequest.newBuilder(
        proxy("/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1")));
    assertThat(watch.statusCode()).isNotEqualTo(429);

    assertThat(held.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.inFlight() == 0);
    assertThat(send(HttpRequest.newBuilder(proxy("/api/v1/namespaces/default/pods/slow"))).statusCode())
        .isEqualTo(200);
  }

  @Test
  void connectionsAreForgottenWhenClientsLeave() throws Exception {
    for (int i = 0; i < 3; i++) {
      try (java.net.Socket socket = new java.net.Socket("127.0.0.1", hub.proxyAddress().getPort())) {
        socket.setSoTimeout(10_000);
        socket.getOutputStream().write(("GET /api/v1/namespaces/default/pods/slow HTTP/1.1\r\n"
            + "Host: hub\r\nUser-Agent: kubelet/1\r\nConnection: close\r\n\r\n").getBytes());
        String answer = new String(socket.getInputStream().readAllBytes());
        assertThat(answer).startsWith("HTTP/1.1 200 OK").contains("\"name\":\"slow\"");
      }
    }
    // A malformed request gets a clear 400 and its connection is closed too.
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", hub.proxyAddress().getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write("NOT HTTP AT ALL\r\n\r\n".getBytes());
      assertThat(new String(socket.getInputStream().readAllBytes())).startsWith("HTTP/1.1 400");
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.openConnections() == 0);
  }

  @Test
  void aKeepAliveClientHoldsNoExchangeItHadAnswered() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", hub.proxyAddress().getPort())) {
      socket.setSoTimeout(10_000);
      var in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
      byte[] request = ("GET /api/v1/namespaces/default/pods/slow HTTP/1.1\r\n"
          + "Host: hub\r\nUser-Agent: kubelet/1\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 1_000; i++) {
        socket.getOutputStream().write(request);
        assertThat(readResponse(in)).startsWith("HTTP/1.1 200 OK").endsWith("\"name\":\"slow\"}}");
      }
      // The connection is still open: nothing of the 1,000 finished exchanges may stay with it.
      await().atMost(Duration.ofSeconds(10)).until(() -> hub.upstreamExchanges() == 0);
      assertThat(hub.openConnections()).isEqualTo(1);
      String metrics = send(HttpRequest.newBuilder(hubServer("/metrics"))).body();
      assertThat(metrics).contains("portage_hub_upstream_exchanges 0.0");
    }
  }

  @Test
  void aClientThatLeavesEndsItsRunningExchange() throws Exception {
    try (Socket socket = new Socket("127.0.0.1", hub.proxyAddress().getPort())) {
      socket.getOutputStream().write(("GET /api/v1/namespaces/default/pods/stuck HTTP/1.1\r\n"
          + "Host: hub\r\nUser-Agent: kubelet/1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      await().atMost(Duration.ofSeconds(5)).until(() -> hub.upstreamExchanges() == 1);
    }
    // The upstream answers only after 8 s; the exchange ends as soon as its client has gone.
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.upstreamExchanges() == 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> hub.inFlight() == 0);
  }

  /** One HTTP/1.1 response with a Content-Length body, head and body as text. */
  private static String readResponse(DataInputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("connection closed after: " + head);
      }
      head.append((char) b);
    }
    int length = head.toString().lines()
        .filter(l -> l.toLowerCase(Locale.ROOT).startsWith("content-length:"))
        .mapToInt(l -> Integer.parseInt(l.substring(l.indexOf(':') + 1).trim()))
        .findFirst().orElseThrow(() -> new AssertionError("no content-length in " + head));
    byte[] body = new byte[length];
    in.readFully(body);
    return head + new String(body, StandardCharsets.UTF_8);
  }
}
