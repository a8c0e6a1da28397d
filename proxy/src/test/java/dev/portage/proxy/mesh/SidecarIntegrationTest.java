package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sidecar end to end: real control plane over in-process gRPC, real backends and sockets. */
class SidecarIntegrationTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  MeshFixture mesh;
  InetSocketAddress proxy;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    proxy = mesh.sidecar.outboundAddress();
    mesh.service("web");
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
  }

  private RawHttp.Response get(String path, String... headers) throws Exception {
    return RawHttp.send(proxy, "GET", WEB, path, headers);
  }

  @Test
  void http1RequestIsRoutedByHostToAnEndpoint() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);

    RawHttp.Response r = get("/hello?x=1");

    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text()).isEqualTo("hello from /hello");
    assertThat(r.header("x-backend")).isEqualTo("yes");
    assertThat(a.hits).hasValue(1);
  }

  @Test
  void hopByHopHeadersAreStrippedAndEndToEndHeadersKept() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    a.behaviour = ex -> {
      ex.getResponseHeaders().set("Connection", "X-Resp-Hop");
      ex.getResponseHeaders().set("X-Resp-Hop", "1");
      ex.getResponseHeaders().set("Keep-Alive", "timeout=5");
      ex.getResponseHeaders().set("Proxy-Authenticate", "Basic");
      ex.getResponseHeaders().set("X-End-To-End", "kept");
      Backend.reply(ex, 200, "ok");
    };

    RawHttp.Response r = get("/", "Connection: close, X-Hop", "X-Hop: secret", "Keep-Alive: timeout=5",
        "Proxy-Connection: keep-alive", "Proxy-Authorization: Basic Zm9v", "TE: trailers",
        "Upgrade: websocket", "X-Kept: yes");

    assertThat(r.status()).isEqualTo(200);
    var seen = a.requestHeaders.get(0);
    assertThat(seen).containsKey("X-kept");
    assertThat(seen.keySet()).map(String::toLowerCase)
        .doesNotContain("x-hop", "keep-alive", "proxy-connection", "proxy-authorization", "te", "upgrade");
    assertThat(r.headers()).containsKey("x-end-to-end")
        .doesNotContainKeys("x-resp-hop", "keep-alive", "proxy-authenticate");
  }

  @Test
  void streamedResponseReachesTheClientBeforeTheBackendFinishes() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    CountDownLatch finish = new CountDownLatch(1);
    a.behaviour = ex -> {
      ex.sendResponseHeaders(200, 0); // chunked
      OutputStream out = ex.getResponseBody();
      out.write("first-event\n".getBytes(StandardCharsets.UTF_8));
      out.flush();
      finish.await(20, TimeUnit.SECONDS);
      out.write("second-event\n".getBytes(StandardCharsets.UTF_8));
      out.close();
    };

    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(("GET /watch HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = s.getInputStream();
      assertThat(RawHttp.line(in)).isEqualTo("HTTP/1.1 200 OK");
      String l;
      boolean chunked = false;
      while (!(l = RawHttp.line(in)).isEmpty()) {
        chunked |= l.equalsIgnoreCase("transfer-encoding: chunked");
      }
      assertThat(chunked).isTrue();
      int size = Integer.parseInt(RawHttp.line(in), 16);
      assertThat(new String(in.readNBytes(size), StandardCharsets.UTF_8)).isEqualTo("first-event\n");
      finish.countDown();
      RawHttp.line(in);
      size = Integer.parseInt(RawHttp.line(in), 16);
      assertThat(new String(in.readNBytes(size), StandardCharsets.UTF_8)).isEqualTo("second-event\n");
    }
  }

  @Test
  void chunkedRequestBodyStreamsToTheBackend() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    CountDownLatch firstChunkSeen = new CountDownLatch(1);
    a.behaviour = ex -> {
      InputStream in = ex.getRequestBody();
      byte[] first = new byte[5];
      // readFully, not readNBytes: the latter ends with a zero-length read that waits for the next chunk.
      new java.io.DataInputStream(in).readFully(first);
      firstChunkSeen.countDown();
      byte[] rest = in.readAllBytes();
      Backend.reply(ex, 200, "got " + new String(first, StandardCharsets.UTF_8) + new String(rest, StandardCharsets.UTF_8));
    };

    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(("POST /upload HTTP/1.1\r\nHost: " + WEB + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
          .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      // The backend reads the first chunk while the client has not sent the rest.
      assertThat(firstChunkSeen.await(10, TimeUnit.SECONDS)).isTrue();
      out.write("6\r\n world\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      RawHttp.Response r = RawHttp.read(s.getInputStream());
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.text()).isEqualTo("got hello world");
    }
  }

  @Test
  void keepAliveConnectionServesSeveralRequestsAndReusesThePool() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      for (int i = 0; i < 3; i++) {
        s.getOutputStream().write(("GET /k" + i + " HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        RawHttp.Response r = RawHttp.read(s.getInputStream());
        assertThat(r.text()).isEqualTo("hello from /k" + i);
      }
    }
    assertThat(mesh.sidecar.pool().openConnections()).isEqualTo(1);
  }

  @Test
  void missingHostIsABadRequest() throws Exception {
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      RawHttp.Response r = RawHttp.read(s.getInputStream());
      assertThat(r.status()).isEqualTo(400);
      assertThat(r.text()).isEqualTo("missing Host header or :authority");
    }
  }

  @Test
  void noReadyEndpointFailsFastWith503UntilOneIsReady() throws Exception {
    mesh.endpoints("web"); // the service exists, without endpoints
    // Its profile first: a request that arrives before it waits for it, also up to the fail-fast timeout,
    // on a timer of the same clock, and the advance below would then end that wait, not the fail-fast one.
    mesh.sidecar.profiles().get(WEB).get(10, TimeUnit.SECONDS);
    CompletableFuture<RawHttp.Response> waiting = RawHttp.sendAsync(proxy, "GET", WEB, "/", null);

    MeshFixture.advanceWhenPending(clock, Duration.ofSeconds(3));

    RawHttp.Response r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.text()).isEqualTo("service in fail-fast");
    // In fail-fast: refused at once, without waiting for the clock.
    assertThat(get("/").text()).isEqualTo("service in fail-fast");

    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    await().atMost(10, TimeUnit.SECONDS).until(() -> get("/").status() == 200);
  }

  @Test
  void routeTimeoutAnswers504() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    CountDownLatch release = new CountDownLatch(1);
    a.behaviour = ex -> {
      release.await(20, TimeUnit.SECONDS);
      Backend.reply(ex, 200, "late");
    };
    mesh.profile("web", """
        routes:
        - name: slow
          condition: {method: GET, pathRegex: /slow}
          timeout: 1s
        """);
    awaitProfileRoutes(1);

    CompletableFuture<RawHttp.Response> waiting = RawHttp.sendAsync(proxy, "GET", WEB, "/slow", null);
    await().atMost(10, TimeUnit.SECONDS).until(() -> a.hits.get() == 1);
    MeshFixture.advanceWhenPending(clock, Duration.ofSeconds(1));

    RawHttp.Response r = waiting.get(10, TimeUnit.SECONDS);
    release.countDown();
    assertThat(r.status()).isEqualTo(504);
    assertThat(r.text()).isEqualTo("request timed out after 1000 ms");
  }

  @Test
  void retriesStopAtTheBudget() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    a.behaviour = ex -> Backend.reply(ex, 503, "down");
    mesh.profile("web", """
        routes:
        - name: flaky
          condition: {pathRegex: /flaky/.*}
          isRetryable: true
        retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 0, ttl: 10s}
        """);
    awaitProfileRoutes(1);

    for (int i = 0; i < 10; i++) {
      assertThat(get("/flaky/" + i).status()).isEqualTo(503);
    }

    // Ratio 0.2: one retry per 5 requests (the 5th and the 10th); every request ends with a retry
    // the budget refused (the 5th and 10th after their one retry failed too).
    assertThat(a.hits).hasValue(12);
    assertThat(metric("portage_sidecar_route_retries_total")).isEqualTo(2.0);
    assertThat(metric("portage_sidecar_retry_budget_exhausted_total")).isEqualTo(10.0);
  }

  @Test
  void retryOfAFailureCanSucceed() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    a.behaviour = ex -> Backend.reply(ex, a.hits.get() == 1 ? 500 : 200, a.hits.get() == 1 ? "boom" : "fine");
    mesh.profile("web", """
        routes:
        - name: flaky
          condition: {method: POST}
          isRetryable: true
        """);
    awaitProfileRoutes(1);

    RawHttp.Response r = RawHttp.send(proxy, "POST", WEB, "/x", "small body".getBytes(StandardCharsets.UTF_8));

    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text()).isEqualTo("fine");
    assertThat(a.hits).hasValue(2);
  }

  @Test
  void noRetryOnNonRetryableRouteOrBodyBeyondTheReplayBuffer() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    a.behaviour = ex -> Backend.reply(ex, 500, "boom");
    mesh.profile("web", """
        routes:
        - name: retryable
          condition: {pathRegex: /r}
          isRetryable: true
        - name: plain
          condition: {pathRegex: /p}
        retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 1, ttl: 1s}
        """);
    awaitProfileRoutes(2);

    assertThat(get("/p").status()).isEqualTo(500);
    assertThat(a.hits).hasValue(1);

    byte[] big = new byte[InboundHandler.REPLAY_LIMIT + 1];
    assertThat(RawHttp.send(proxy, "POST", WEB, "/r", big).status()).isEqualTo(500);
    assertThat(a.hits).hasValue(2);

    // The same route retries a request that fits in the buffer, once: the reserve (1/s × 1 s) and
    // the two deposits pay for one retry, not two.
    assertThat(RawHttp.send(proxy, "POST", WEB, "/r", new byte[100]).status()).isEqualTo(500);
    assertThat(a.hits).hasValue(4);
  }

  @Test
  void trafficSplitFollowsTheWeights() throws Exception {
    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    mesh.service("web-a");
    mesh.service("web-b");
    mesh.endpoints("web-a", a);
    mesh.endpoints("web-b", b);
    mesh.profile("web", """
        dstOverrides:
        - {authority: web-a.default.svc.cluster.local:8080, weight: 800m}
        - {authority: web-b.default.svc.cluster.local:8080, weight: 200m}
        - {authority: web-c.default.svc.cluster.local:8080, weight: 0}
        """);
    await().atMost(10, TimeUnit.SECONDS).until(() -> {
      mesh.sidecar.profiles().get(WEB);
      return mesh.sidecar.profiles().peek(WEB).overrides().size() == 2;
    });

    for (int i = 0; i < 200; i++) {
      assertThat(get("/").status()).isEqualTo(200);
    }

    assertThat(a.hits.get() + b.hits.get()).isEqualTo(200);
    assertThat(a.hits.get()).isBetween(140, 180);
  }

  @Test
  void destinationReconnectKeepsTheLastEndpointsUntilTheFirstNewMessage() throws Exception {
    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    mesh.endpoints("web", a);
    assertThat(get("/").status()).isEqualTo(200);

    mesh.stopControlPlane();
    mesh.store = new dev.portage.control.store.ResourceStore();
    mesh.service("web");
    mesh.endpoints("web", b);

    // The control plane is gone: the last set keeps serving.
    for (int i = 0; i < 3; i++) {
      assertThat(get("/").status()).isEqualTo(200);
    }
    assertThat(a.hits).hasValue(4);
    assertThat(b.hits).hasValue(0);

    mesh.startControlPlane();
    await().atMost(10, TimeUnit.SECONDS).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return mesh.sidecar.discovery().get(WEB).balancer.endpoints().stream()
          .allMatch(e -> e.target().getPort() == b.port());
    });
    assertThat(get("/").status()).isEqualTo(200);
    assertThat(b.hits).hasValue(1);
    assertThat(a.hits).hasValue(4);
  }

  @Test
  void thousandRequestsOnFreshConnectionsLeaveNothingBehind() throws Exception {
    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    mesh.endpoints("web", a, b);

    for (int i = 0; i < 1000; i++) {
      assertThat(get("/n").status()).isEqualTo(200);
    }

    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.inboundConnections() == 0);
    assertThat(mesh.sidecar.inflightRequests()).isZero();
    assertThat(mesh.sidecar.pool().openConnections()).isLessThanOrEqualTo(2 * 16);
    assertThat(mesh.sidecar.pool().origins()).isEqualTo(2);
    assertThat(mesh.sidecar.discovery().get(WEB).inFlight()).isZero();

    // Idle expiry empties the pool and the discovery cache.
    clock.advance(Duration.ofSeconds(61));
    clock.advance(Duration.ofSeconds(61));
    // Expired connections close on their event loops, possibly after the sweep that expired them;
    // an origin entry goes at the first sweep that finds it empty.
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.pool().openConnections() == 0);
    mesh.sidecar.pool().sweep();
    assertThat(mesh.sidecar.pool().origins()).isZero();
    assertThat(mesh.sidecar.discovery().all()).isEmpty();
    assertThat(mesh.sidecar.profiles().size()).isZero();
  }

  private void awaitProfileRoutes(int n) {
    mesh.awaitProfileRoutes(WEB, n);
  }

  private double metric(String name) {
    return mesh.registry.scrape().stream()
        .filter(m -> m.getMetadata().getPrometheusName().equals(name.replace("_total", "")))
        .flatMap(m -> m.getDataPoints().stream())
        .mapToDouble(d -> ((io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot) d).getValue())
        .sum();
  }
}
