package dev.portage.core.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.FakeClock;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AdminServerTest {

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final List<AdminServer> servers = new ArrayList<>();

  @AfterEach
  void closeServers() {
    servers.forEach(AdminServer::close);
    client.close();
  }

  private AdminServer start(AdminServer.Builder builder) throws IOException {
    AdminServer server = builder.registry(new PrometheusRegistry()).build();
    servers.add(server);
    return server.start();
  }

  private HttpResponse<String> get(AdminServer server, String pathAndQuery) throws Exception {
    return send(server, "GET", pathAndQuery, null);
  }

  private HttpResponse<String> send(
      AdminServer server, String method, String pathAndQuery, String accept) throws Exception {
    InetSocketAddress address = server.localAddress();
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort() + pathAndQuery))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (accept != null) {
      request.header("Accept", accept);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthzAndLivezAnswerOkWhenEveryLivenessCheckPasses() throws Exception {
    AdminServer server = start(AdminServer.builder().livenessCheck("loop", HealthCheck.Result::ok));

    for (String path : List.of("/healthz", "/livez")) {
      HttpResponse<String> response = get(server, path);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isEqualTo("ok");
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue("text/plain; charset=utf-8");
    }
  }

  @Test
  void healthzVerboseListsChecksAndFailsWhenOneFails() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .livenessCheck("loop", HealthCheck.Result::ok)
                .livenessCheck("disk", () -> HealthCheck.Result.failed("read-only")));

    HttpResponse<String> response = get(server, "/healthz?verbose");

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body())
        .isEqualTo("[+]loop ok\n[-]disk failed: read-only\nhealthz check failed\n");
    assertThat(get(server, "/livez").body())
        .isEqualTo("[-]disk failed: read-only\nlivez check failed\n");
  }

  @Test
  void readyzAnswersOkWithNoChecks() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> response = get(server, "/readyz");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok");
  }

  @Test
  void readyzFailsWith503ListingOnlyFailingChecks() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck("informers", HealthCheck.Result::ok)
                .readinessCheck("agents", () -> HealthCheck.Result.failed("no agent connected"))
                .readinessCheck("rules", () -> HealthCheck.Result.failed("not synced")));

    HttpResponse<String> response = get(server, "/readyz");

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body())
        .isEqualTo(
            "[-]agents failed: no agent connected\n"
                + "[-]rules failed: not synced\n"
                + "readyz check failed\n");
  }

  @Test
  void readyzVerboseListsEveryCheckWhenHealthy() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck("informers", HealthCheck.Result::ok)
                .readinessCheck("agents", HealthCheck.Result::ok));

    HttpResponse<String> response = get(server, "/readyz?verbose=1");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("[+]informers ok\n[+]agents ok\nreadyz check passed\n");
  }

  @Test
  void readyzExcludeSkipsNamedChecks() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck("informers", HealthCheck.Result::ok)
                .readinessCheck("agents", () -> HealthCheck.Result.failed("none"))
                .readinessCheck("rules", () -> HealthCheck.Result.failed("stale")));

    assertThat(get(server, "/readyz?exclude=agents&exclude=rules").body()).isEqualTo("ok");
    HttpResponse<String> verbose = get(server, "/readyz?verbose&exclude=agents");
    assertThat(verbose.statusCode()).isEqualTo(503);
    assertThat(verbose.body())
        .isEqualTo("[+]informers ok\n[-]rules failed: stale\nreadyz check failed\n");
  }

  @Test
  void checkThatThrowsCountsAsFailedWithItsMessage() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck(
                    "cache",
                    () -> {
                      throw new IllegalStateException("cache dir missing");
                    }));

    HttpResponse<String> response = get(server, "/readyz");

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body())
        .isEqualTo("[-]cache failed: cache dir missing\nreadyz check failed\n");
  }

  @Test
  void readinessFollowsTheCheckOnEveryProbe() throws Exception {
    AtomicBoolean synced = new AtomicBoolean();
    AdminServer server =
        start(
            AdminServer.builder()
                .readinessCheck(
                    "sync",
                    () ->
                        synced.get()
                            ? HealthCheck.Result.ok()
                            : HealthCheck.Result.failed("syncing")));

    assertThat(get(server, "/readyz").statusCode()).isEqualTo(503);
    synced.set(true);
    assertThat(get(server, "/readyz").statusCode()).isEqualTo(200);
  }

  @Test
  void metricsServesCounterFromTheRegistryInPrometheusTextFormat() throws Exception {
    PrometheusRegistry registry = new PrometheusRegistry();
    Counter counter =
        Counter.builder()
            .name("portage_test_requests_total")
            .help("test requests")
            .register(registry);
    counter.inc(3);
    AdminServer server = AdminServer.builder().registry(registry).build();
    servers.add(server);
    server.start();

    HttpResponse<String> response = get(server, "/metrics");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    assertThat(response.body())
        .contains("# TYPE portage_test_requests_total counter")
        .contains("portage_test_requests_total 3.0");
  }

  @Test
  void metricsServesOpenMetricsWhenAsked() throws Exception {
    PrometheusRegistry registry = new PrometheusRegistry();
    Counter.builder().name("portage_test_events_total").register(registry).inc();
    AdminServer server = AdminServer.builder().registry(registry).build();
    servers.add(server);
    server.start();

    HttpResponse<String> response =
        send(server, "GET", "/metrics", "application/openmetrics-text; version=1.0.0");

    assertThat(response.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(response.body()).contains("portage_test_events_total 1.0").endsWith("# EOF\n");
  }

  @Test
  void customRouteReceivesMethodPathAndQuery() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .route(
                    "/debug/echo",
                    request ->
                        AdminResponse.json(
                            201,
                            "{\"method\":\""
                                + request.method()
                                + "\",\"path\":\""
                                + request.path()
                                + "\",\"who\":\""
                                + request.parameters("who")
                                + "\"}")));

    HttpResponse<String> response = send(server, "POST", "/debug/echo?who=a&who=b", null);

    assertThat(response.statusCode()).isEqualTo(201);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValue("application/json; charset=utf-8");
    assertThat(response.body())
        .isEqualTo("{\"method\":\"POST\",\"path\":\"/debug/echo\",\"who\":\"[a, b]\"}");
  }

  @Test
  void customRouteReplacesBuiltInWithTheSamePath() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .route("/healthz", request -> AdminResponse.html(200, "<p>mine</p>")));

    HttpResponse<String> response = get(server, "/healthz");

    assertThat(response.body()).isEqualTo("<p>mine</p>");
    assertThat(response.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
    assertThat(get(server, "/livez").body()).isEqualTo("ok");
  }

  @Test
  void customHeadersAreSent() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .route(
                    "/status",
                    request ->
                        new AdminResponse(
                            200,
                            "text/plain",
                            new byte[] {'x'},
                            java.util.Map.of("Cache-Control", "no-store"))));

    assertThat(get(server, "/status").headers().firstValue("Cache-Control")).hasValue("no-store");
  }

  @Test
  void indexListsEveryRoute() throws Exception {
    AdminServer server =
        start(AdminServer.builder().route("/status", request -> AdminResponse.text(200, "fine")));

    assertThat(get(server, "/").body())
        .isEqualTo(
            "/\n/dashboard\n/dashboard/app.css\n/dashboard/app.js\n/dashboard/state\n"
                + "/healthz\n/livez\n/metrics\n/readyz\n/status\n");
  }

  @Test
  void unknownPathIs404WithTextBody() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> response = get(server, "/nope?x=1");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).isEqualTo("not found: /nope\n");
  }

  @Test
  void nonGetMethodOnBuiltInIs405() throws Exception {
    AdminServer server = start(AdminServer.builder());

    for (String method : List.of("POST", "PUT", "DELETE")) {
      HttpResponse<String> response = send(server, method, "/readyz", null);
      assertThat(response.statusCode()).isEqualTo(405);
      assertThat(response.body()).isEqualTo("method not allowed: " + method + "\n");
      assertThat(response.headers().firstValue("Allow")).hasValue("GET, HEAD");
    }
  }

  @Test
  void headGetsHeadersWithoutBody() throws Exception {
    AdminServer server = start(AdminServer.builder());

    HttpResponse<String> response = send(server, "HEAD", "/healthz", null);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEmpty();
    assertThat(response.headers().firstValue("Content-Length")).hasValue("2");
  }

  @Test
  void handlerExceptionBecomes500() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .route(
                    "/boom",
                    request -> {
                      throw new IOException("state file unreadable");
                    }));

    HttpResponse<String> response = get(server, "/boom");

    assertThat(response.statusCode()).isEqualTo(500);
    assertThat(response.body()).isEqualTo("internal error: state file unreadable\n");
    assertThat(get(server, "/healthz").statusCode()).isEqualTo(200);
  }

  @Test
  void oversizedRequestIsRefusedWith413BeforeItsBody() throws Exception {
    AdminServer server =
        start(AdminServer.builder().route("/upload", request -> AdminResponse.text(200, "?")));

    try (Socket socket = new Socket("127.0.0.1", server.localAddress().getPort())) {
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 131072\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      assertThat(in.readLine()).isEqualTo("HTTP/1.1 413 Request Entity Too Large");
    }
  }

  @Test
  void keepAliveServesSeveralRequestsOnOneConnectionAndForgetsItWhenClosed() throws Exception {
    AdminServer server = start(AdminServer.builder());

    try (Socket socket = new Socket("127.0.0.1", server.localAddress().getPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      out.write(
          ("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(readResponse(in)).isEqualTo("ok");
      assertThat(readResponse(in)).isEqualTo("ok");
      assertThat(server.openConnections()).isEqualTo(1);
    }

    await().atMost(10, TimeUnit.SECONDS).until(() -> server.openConnections() == 0);
  }

  @Test
  void malformedRequestIsAnswered400AndClosed() throws Exception {
    AdminServer server = start(AdminServer.builder());

    try (Socket socket = new Socket("127.0.0.1", server.localAddress().getPort())) {
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              "GET /healthz HTTP/1.1\r\nbad header line\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      assertThat(in.readLine()).startsWith("HTTP/1.1 400");
    }
    await().atMost(10, TimeUnit.SECONDS).until(() -> server.openConnections() == 0);
  }

  @Test
  void closeReleasesThePortAndIsIdempotent() throws Exception {
    AdminServer server = start(AdminServer.builder());
    int port = server.localAddress().getPort();

    server.close();
    server.close();

    try (ServerSocket again = new ServerSocket()) {
      again.setReuseAddress(true);
      again.bind(new InetSocketAddress("127.0.0.1", port));
      assertThat(again.getLocalPort()).isEqualTo(port);
    }
  }

  @Test
  void closeLeavesCallerOwnedEventLoopGroupRunning() throws Exception {
    EventLoopGroup group = NettyTransport.best().newEventLoopGroup(1, "test-admin");
    try {
      AdminServer server = start(AdminServer.builder().eventLoopGroup(group));
      assertThat(get(server, "/healthz").statusCode()).isEqualTo(200);

      server.close();

      assertThat(group.isShuttingDown()).isFalse();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void startFailsWithIoExceptionWhenPortIsTaken() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      AdminServer server = AdminServer.builder().port(taken.getLocalPort()).build();
      servers.add(server);

      assertThatThrownBy(server::start)
          .isInstanceOf(IOException.class)
          .hasMessageContaining("cannot bind 127.0.0.1:" + taken.getLocalPort());
    }
  }

  @Test
  void startTwiceOrAfterCloseIsRefused() throws Exception {
    AdminServer server = start(AdminServer.builder());

    assertThatThrownBy(server::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("admin server already started");
    server.close();
    assertThatThrownBy(server::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("admin server is closed");
    assertThatThrownBy(() -> AdminServer.builder().build().localAddress())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("admin server not started");
  }

  @Test
  void builderRejectsBadArguments() {
    assertThatThrownBy(() -> AdminServer.builder().port(65536))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: 65536 (expected: 0..65535)");
    assertThatThrownBy(() -> AdminServer.builder().route("status", request -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("path: status (expected: starts with '/', no query)");
    assertThatThrownBy(
            () ->
                AdminServer.builder()
                    .readinessCheck("a", HealthCheck.Result::ok)
                    .readinessCheck("a", HealthCheck.Result::ok))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("readinessCheck: duplicate name 'a'");
    assertThatThrownBy(
            () -> AdminServer.builder().livenessCheck("has space", HealthCheck.Result::ok))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("livenessCheck: name 'has space' (expected: non-empty, no spaces or commas)");
    assertThatThrownBy(() -> new AdminResponse(700, "text/plain", new byte[0], java.util.Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("status: 700 (expected: 100..599)");
  }

  @Test
  void healthOnlyServesTheHealthPathsAndItsRoutesAndNothingElse() throws Exception {
    AdminServer server =
        start(
            AdminServer.builder()
                .healthOnly()
                .route("/ready", request -> AdminResponse.text(200, "ok")));

    for (String path : List.of("/healthz", "/livez", "/readyz", "/ready")) {
      assertThat(get(server, path).statusCode()).as(path).isEqualTo(200);
    }
    for (String path : List.of("/metrics", "/dashboard", "/dashboard/state", "/")) {
      HttpResponse<String> response = get(server, path);
      assertThat(response.statusCode()).as(path).isEqualTo(404);
      assertThat(response.body()).isEqualTo("not found: " + path + "\n");
    }
  }

  @Test
  void connectionThatNeverCompletesItsRequestIsClosedAfterTheReadTimeout() throws Exception {
    FakeClock clock = new FakeClock();
    AdminServer server =
        start(
            AdminServer.builder()
                .timeSource(clock.timeSource())
                .requestReadTimeout(Duration.ofSeconds(10)));

    try (Socket socket = new Socket("127.0.0.1", server.localAddress().getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
      await().atMost(10, TimeUnit.SECONDS).until(() -> clock.pendingTasks() == 1);
      clock.advance(Duration.ofSeconds(9));
      assertThat(server.openConnections()).isEqualTo(1);

      clock.advance(Duration.ofSeconds(1));
      assertThat(socket.getInputStream().read()).isEqualTo(-1); // closed without an answer
    }
    await().atMost(10, TimeUnit.SECONDS).until(() -> server.openConnections() == 0);
  }

  @Test
  void idleKeepAliveConnectionIsClosedAReadTimeoutAfterItsLastResponse() throws Exception {
    FakeClock clock = new FakeClock();
    AdminServer server =
        start(
            AdminServer.builder()
                .timeSource(clock.timeSource())
                .requestReadTimeout(Duration.ofSeconds(10)));

    try (Socket socket = new Socket("127.0.0.1", server.localAddress().getPort())) {
      socket.setSoTimeout(10_000);
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
      await().atMost(10, TimeUnit.SECONDS).until(() -> clock.pendingTasks() == 1);
      clock.advance(Duration.ofSeconds(9)); // the request comes just in time
      socket.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      assertThat(readResponse(in)).isEqualTo("ok");
      await().atMost(10, TimeUnit.SECONDS).until(() -> clock.pendingTasks() == 1); // re-armed
      clock.advance(Duration.ofSeconds(9));
      assertThat(server.openConnections()).isEqualTo(1);

      clock.advance(Duration.ofSeconds(1));
      assertThat(in.read()).isEqualTo(-1);
    }
  }

  @Test
  void connectionsBeyondTheCapAreClosedAtAcceptWhileTheOthersAreServed() throws Exception {
    AdminServer server = start(AdminServer.builder().maxConnections(3));
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        Socket s = new Socket("127.0.0.1", server.localAddress().getPort());
        s.setSoTimeout(10_000);
        s.getOutputStream().write('G'); // a request that never ends
        held.add(s);
      }
      await().atMost(10, TimeUnit.SECONDS).until(() -> server.openConnections() == 3);
      try (Socket extra = new Socket("127.0.0.1", server.localAddress().getPort())) {
        extra.setSoTimeout(10_000);
        assertThat(extra.getInputStream().read()).isEqualTo(-1);
      }
      assertThat(server.refusedConnections()).isEqualTo(1);

      held.remove(0).close();
      await().atMost(10, TimeUnit.SECONDS).until(() -> server.openConnections() == 2);
      assertThat(get(server, "/healthz").statusCode()).isEqualTo(200);
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  /** Reads one response with a Content-Length body from a keep-alive connection. */
  private static String readResponse(BufferedReader in) throws IOException {
    String status = in.readLine();
    assertThat(status).isEqualTo("HTTP/1.1 200 OK");
    int length = -1;
    for (String line = in.readLine(); !line.isEmpty(); line = in.readLine()) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    char[] body = new char[length];
    int read = 0;
    while (read < length) {
      read += in.read(body, read, length - read);
    }
    return new String(body);
  }
}
