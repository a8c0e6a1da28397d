package dev.portage.tunnel.e2e;

import static dev.portage.tunnel.e2e.MetricValues.AGENT;
import static dev.portage.tunnel.e2e.MetricValues.SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.tunnel.agent.Blackhole;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.server.FrontendMode;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * HTTP CONNECT client (curl, or a plain socket) → Portage server in {@code http-connect} mode →
 * Portage agent → real backends, every hop a real loopback socket.
 */
class HttpConnectModeEndToEndTest {
  private static final int MIB = 1024 * 1024;
  private final List<AutoCloseable> resources = new ArrayList<>();
  private TunnelFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  private <T extends AutoCloseable> T use(T t) {
    resources.add(t);
    return t;
  }

  private TunnelFixture start() {
    fx = TunnelFixture.start(FrontendMode.HTTP_CONNECT);
    return fx;
  }

  private ConnectClient tunnel(String target) throws Exception {
    return use(ConnectClient.tunnel(fx.proxyPort(), target));
  }

  private static String errorResponse(int status, String reason, String body) {
    return "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: "
        + body.getBytes(StandardCharsets.UTF_8).length + "\r\nConnection: close\r\n\r\n" + body;
  }

  private static Path curl() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
      Path p = Path.of(dir, "curl");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  @Test
  void curlFetchesSuccessThroughTheTunnel() throws Exception {
    Path curl = curl();
    Assumptions.assumeTrue(curl != null, "curl is not installed");
    start();
    TunnelAgent agent = fx.agent("agent-a");
    HttpBackend http = use(new HttpBackend());

    ProcessBuilder pb = new ProcessBuilder(curl.toString(), "-sS", "--max-time", "30", "--proxytunnel",
        "-x", "http://127.0.0.1:" + fx.proxyPort(), "http://" + http.address() + "/success");
    // Proxy variables of the environment must not change what curl does (no_proxy could bypass -x).
    pb.environment().keySet().removeIf(k -> k.toLowerCase(java.util.Locale.ROOT).endsWith("_proxy"));
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();

    assertThat(p.exitValue()).as("curl output: %s", out).isZero();
    assertThat(out).isEqualTo(HttpBackend.SUCCESS_BODY);
    assertThat(fx.agentMetric(agent, AGENT + "dial_duration_seconds")).as("dialed by the agent").isEqualTo(1);
    fx.awaitNoTunnelState();
  }

  @Test
  void hundredConcurrentTunnelsEachGetTheirOwnBytesBack() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend echo = use(TcpBackend.echo());

    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        long seed = 1000 + i;
        results.add(pool.submit(() -> {
          int size = 1 + new SplittableRandom(seed).nextInt(256 * 1024);
          byte[] sent = TcpBackend.payload(seed, size);
          try (ConnectClient c = ConnectClient.tunnel(fx.proxyPort(), echo.address())) {
            CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> {
              try {
                return c.read(size);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            }, pool);
            c.write(sent);
            byte[] received = back.get(60, TimeUnit.SECONDS);
            c.socket.shutdownOutput();
            return Arrays.equals(sent, received) && c.readToEof().length == 0;
          }
        }));
      }
      for (Future<Boolean> r : results) {
        assertThat(r.get(90, TimeUnit.SECONDS)).isTrue();
      }
    }
    fx.awaitNoTunnelState();
  }

  /**
   * 64 MiB each way, one direction at a time (an echo would couple them: see docs/tunnel.md, the
   * overflow rule cuts a connection whose peer falls behind by more than its queue).
   */
  @Test
  void sixtyFourMebibytesTravelIntactInBothDirections() throws Exception {
    start();
    fx.agent("agent-a");
    int total = 64 * MIB;
    TcpBackend sink = use(TcpBackend.sink());
    ConnectClient up = tunnel(sink.address());
    MessageDigest sent = MessageDigest.getInstance("SHA-256");
    SplittableRandom random = new SplittableRandom(64);
    OutputStream out = up.socket.getOutputStream();
    new java.io.DataOutputStream(out).writeLong(total);
    byte[] chunk = new byte[MIB];
    for (int i = 0; i < total / MIB; i++) {
      random.nextBytes(chunk);
      sent.update(chunk);
      out.write(chunk);
    }
    out.flush();
    assertThat(up.readToEof()).as("the backend's digest of what it received").isEqualTo(sent.digest());

    TcpBackend source = use(TcpBackend.source(total));
    ConnectClient down = tunnel(source.address());
    MessageDigest received = MessageDigest.getInstance("SHA-256");
    InputStream in = down.in();
    byte[] buf = new byte[256 * 1024];
    long got = 0;
    for (int n; (n = in.read(buf)) >= 0; ) {
      received.update(buf, 0, n);
      got += n;
    }
    assertThat(got).isEqualTo(total);
    assertThat(received.digest()).isEqualTo(MessageDigest.getInstance("SHA-256").digest(TcpBackend.payload(1, total)));
    fx.awaitNoTunnelState();
  }

  @Test
  void slowReaderDoesNotSlowAnotherTunnelOnTheSameAgent() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    // The stuck client asks for 32 MiB and does not read: more than every socket buffer on the way holds.
    TcpBackend source = use(TcpBackend.source(32 * MIB));
    TcpBackend fastSource = use(TcpBackend.source(16 * MIB));
    ConnectClient stuck = tunnel(source.address());
    // Flow control pauses the agent's reads of that one backend once the window is used up.
    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.agentMetric(agent, MetricValues.AGENT + "flow_control_paused_connections") == 1);

    ConnectClient fast = tunnel(fastSource.address());
    assertThat(fast.read(16 * MIB)).isEqualTo(TcpBackend.payload(1, 16 * MIB));
    assertThat(fast.readToEof()).isEmpty();

    // The stuck tunnel was held back, not cut: it gets every byte once it reads.
    assertThat(stuck.readToEof()).isEqualTo(TcpBackend.payload(1, 32 * MIB));
    assertThat(fx.serverMetric(SERVER + "receive_queue_overflows", "service_method", "HTTP-CONNECT")).isZero();
    fx.awaitNoTunnelState();
  }

  @Test
  void dialToAClosedPortGets502WithTheAgentsError() throws Exception {
    start();
    fx.agent("agent-a");
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    ConnectClient c = use(ConnectClient.to(fx.proxyPort()));
    c.write(("CONNECT 127.0.0.1:" + closedPort + " HTTP/1.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));

    assertThat(c.readToEofText()).isEqualTo(errorResponse(502, "Bad Gateway",
        "dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused"));
    fx.awaitNoTunnelState();
  }

  @Test
  void withoutAnAgentTheAnswerIsUpstreamsExact500() throws Exception {
    start();
    ConnectClient c = use(ConnectClient.to(fx.proxyPort()));
    c.write("CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

    assertThat(c.readToEofText()).isEqualTo(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 50\r\n"
            + "Connection: close\r\n\r\ncurrently no tunnels available: No agent available");
  }

  @Test
  void agentDialTimeoutGets504() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    Blackhole hole = use(new Blackhole());
    ConnectClient c = use(ConnectClient.to(fx.proxyPort()));
    c.write(("CONNECT " + hole.address() + " HTTP/1.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    fx.agentClock.advance(Duration.ofSeconds(5));

    assertThat(c.readToEofText()).isEqualTo(
        errorResponse(504, "Gateway Timeout", "dial tcp " + hole.address() + ": i/o timeout"));
    fx.awaitNoTunnelState();
  }

  @Test
  void clientEofClosesTheBackendAndItsCloseEndsTheTunnel() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    ConnectClient c = tunnel(backend.address());
    Socket s = use(backend.nextSocket());
    s.setSoTimeout(30_000);
    c.write("request".getBytes(StandardCharsets.US_ASCII));

    c.socket.shutdownOutput();

    // CLOSE_REQ reaches the agent, which flushes what was sent and closes the backend socket.
    assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("request");
    assertThat(c.readToEof()).isEmpty();
    fx.awaitNoTunnelState();
  }

  @Test
  void backendCloseReachesTheClientAfterItsLastBytes() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    ConnectClient c = tunnel(backend.address());
    Socket s = use(backend.nextSocket());

    try (OutputStream out = s.getOutputStream()) {
      out.write("bye".getBytes(StandardCharsets.US_ASCII));
    }

    assertThat(c.readToEofText()).isEqualTo("bye");
    fx.awaitNoTunnelState();
  }

  @Test
  void losingTheAgentClosesEstablishedTunnelsAndAnswersPendingOnesWith502() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    TcpBackend echo = use(TcpBackend.echo());
    Blackhole hole = use(new Blackhole());
    ConnectClient established = tunnel(echo.address());
    ConnectClient pending = use(ConnectClient.to(fx.proxyPort()));
    pending.write(("CONNECT " + hole.address() + " HTTP/1.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    agent.close();

    assertThat(established.readToEof()).isEmpty();
    String answer = pending.readToEofText();
    assertThat(answer).startsWith("HTTP/1.1 502 Bad Gateway\r\n")
        .contains("agent agent-a disconnected before answering the dial");
    fx.awaitNoTunnelState();
  }

  @Test
  void clientGoneWhileTheDialIsPendingCancelsTheAgentsDial() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    Blackhole hole = use(new Blackhole());
    ConnectClient pending = use(ConnectClient.to(fx.proxyPort()));
    pending.write(("CONNECT " + hole.address() + " HTTP/1.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    pending.close();

    // DIAL_CLS reaches the agent: its dial is dropped without its clock moving.
    fx.awaitNoTunnelState();
    assertThat(fx.serverMetric(SERVER + "dial_failure_count", "reason", "frontend_close")).isEqualTo(1);
  }
}
