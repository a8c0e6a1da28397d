package dev.portage.tunnel.e2e;

import static dev.portage.tunnel.e2e.MetricValues.AGENT;
import static dev.portage.tunnel.e2e.MetricValues.SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.tunnel.agent.Blackhole;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.server.FrontendMode;
import io.grpc.Status;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * gRPC client ({@code ProxyService.Proxy}) → Portage server → Portage agent → real backends, every
 * hop a real socket on loopback. Covers each row of the tunnel state machine end to end.
 */
class GrpcModeEndToEndTest {
  private final List<AutoCloseable> resources = new ArrayList<>();
  private TunnelFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fx.close();
    }
    for (AutoCloseable r : resources) {
      r.close();
    }
  }

  private <T extends AutoCloseable> T use(T t) {
    resources.add(t);
    return t;
  }

  private TunnelFixture start() {
    fx = TunnelFixture.start(FrontendMode.GRPC);
    return fx;
  }

  @Test
  void fetchesSuccessFromAnHttpBackendLikeUpstreamsTestClient() throws Exception {
    start();
    fx.agent("agent-a");
    HttpBackend http = use(new HttpBackend());

    GrpcTunnel t = fx.grpcTunnel();
    t.connect(http.address());
    t.write(("GET /success HTTP/1.1\r\nHost: " + http.address() + "\r\nConnection: close\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    // The backend closes after its answer: the agent's unsolicited CLOSE_RSP ends the stream.
    String response = new String(t.readUntilClose(), StandardCharsets.US_ASCII);

    assertThat(response).startsWith("HTTP/1.1 200 ").endsWith("\r\n\r\n" + HttpBackend.SUCCESS_BODY);
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
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
        long seed = i;
        results.add(pool.submit(() -> {
          int size = 1 + new SplittableRandom(seed).nextInt(256 * 1024);
          byte[] sent = TcpBackend.payload(seed, size);
          GrpcTunnel t = fx.grpcTunnel();
          t.connect(echo.address());
          t.write(sent);
          byte[] back = t.read(size);
          t.closeRequest();
          t.nextPacket(PacketType.CLOSE_RSP);
          return Arrays.equals(sent, back) && t.awaitClose().isOk();
        }));
      }
      for (Future<Boolean> r : results) {
        assertThat(r.get(60, TimeUnit.SECONDS)).isTrue();
      }
    }
    fx.awaitNoTunnelState();
    assertThat(fx.serverMetric(SERVER + "dial_duration_seconds")).isEqualTo(100);
  }

  @Test
  void dialToAClosedPortFailsWithTheAgentsErrorAndEndsTheStream() throws Exception {
    start();
    fx.agent("agent-a");
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }

    GrpcTunnel t = fx.grpcTunnel();
    Packet rsp = t.dial("127.0.0.1:" + closedPort);

    assertThat(rsp.getDialResponse().getConnectID()).isZero();
    assertThat(rsp.getDialResponse().getError())
        .isEqualTo("dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused");
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(fx.serverMetric(SERVER + "dial_failure_count", "reason", "error_response")).isEqualTo(1);
    fx.awaitNoTunnelState();
  }

  @Test
  void withoutAnAgentTheDialIsRefusedWithNoAgentAvailable() {
    start();
    GrpcTunnel t = fx.grpcTunnel();
    Packet rsp = t.dial("127.0.0.1:1");
    assertThat(rsp.getDialResponse().getError()).isEqualTo("No agent available");
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(fx.serverMetric(SERVER + "dial_failure_count", "reason", "no_agent")).isEqualTo(1);
  }

  @Test
  void agentDialTimeoutIsAnsweredOnTheAgentsClock() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    Blackhole hole = use(new Blackhole());

    GrpcTunnel t = fx.grpcTunnel();
    t.dialAsync(hole.address());
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);
    fx.agentClock.advance(Duration.ofSeconds(4));
    assertThat(agent.pendingDials()).isEqualTo(1);
    fx.agentClock.advance(Duration.ofSeconds(1));

    Packet rsp = t.nextPacket(PacketType.DIAL_RSP);
    assertThat(rsp.getDialResponse().getError()).isEqualTo("dial tcp " + hole.address() + ": i/o timeout");
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(fx.agentMetric(agent, AGENT + "endpoint_dial_failure", "reason", "timeout")).isEqualTo(1);
    fx.awaitNoTunnelState();
  }

  @Test
  void dataBeforeTheDialGetsBackendNotInitialized() {
    start();
    fx.agent("agent-a");
    GrpcTunnel t = fx.grpcTunnel();
    t.send(GrpcTunnel.data(5, com.google.protobuf.ByteString.copyFromUtf8("early")));
    Packet rsp = t.nextPacket(PacketType.CLOSE_RSP);
    assertThat(rsp.getCloseResponse().getConnectID()).isEqualTo(5);
    assertThat(rsp.getCloseResponse().getError()).isEqualTo("backend not initialized");
  }

  @Test
  void dataForAnotherConnectIdClosesTheTunnelAndTheBackendSocket() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    GrpcTunnel t = fx.grpcTunnel();
    long id = t.connect(backend.address());
    Socket s = use(backend.nextSocket());

    t.send(GrpcTunnel.data(id + 1000, com.google.protobuf.ByteString.copyFromUtf8("stray")));

    Packet rsp = t.nextPacket(PacketType.CLOSE_RSP);
    assertThat(rsp.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(rsp.getCloseResponse().getError())
        .isEqualTo("DATA for connectID " + (id + 1000) + " on a stream established as connectID " + id);
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    s.setSoTimeout(30_000);
    assertThat(s.getInputStream().read()).as("backend sees EOF").isEqualTo(-1);
    fx.awaitNoTunnelState();
  }

  @Test
  void dialCloseWhilePendingDropsTheDialAndTheAgentsLateAnswerIsIgnored() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    Blackhole hole = use(new Blackhole());
    GrpcTunnel t = fx.grpcTunnel();
    t.dialAsync(hole.address());
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    t.closeDial();

    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.serverMetric(SERVER + "pending_backend_dials") == 0);
    assertThat(fx.serverMetric(SERVER + "dial_failure_count", "reason", "frontend_close")).isEqualTo(1);
    // DIAL_CLS from a frontend is not forwarded: the agent gives up on its own clock, and its late
    // DIAL_RSP matches nothing on the server.
    fx.agentClock.advance(Duration.ofSeconds(5));
    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.serverMetric(SERVER + "dial_failure_count", "reason", "unrecognized_response") == 1);
    assertThat(agent.pendingDials()).isZero();
    // The stream itself stays usable for a new dial.
    TcpBackend echo = use(TcpBackend.echo());
    t.connect(echo.address());
    t.write(new byte[] {1, 2, 3});
    assertThat(t.read(3)).containsExactly(1, 2, 3);
    t.halfClose();
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitNoTunnelState();
  }

  @Test
  void closeRequestFromTheClientClosesTheBackendSocket() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    GrpcTunnel t = fx.grpcTunnel();
    long id = t.connect(backend.address());
    Socket s = use(backend.nextSocket());
    t.write("last words".getBytes(StandardCharsets.US_ASCII));

    t.closeRequest();

    Packet rsp = t.nextPacket(PacketType.CLOSE_RSP);
    assertThat(rsp.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(rsp.getCloseResponse().getError()).isEmpty();
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    s.setSoTimeout(30_000);
    // Data sent before CLOSE_REQ is flushed to the backend before its socket closes.
    assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("last words");
    fx.awaitNoTunnelState();
  }

  @Test
  void backendEofReachesTheClientAfterItsLastBytes() throws Exception {
    start();
    fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    GrpcTunnel t = fx.grpcTunnel();
    t.connect(backend.address());
    Socket s = use(backend.nextSocket());

    try (OutputStream out = s.getOutputStream()) {
      out.write("goodbye".getBytes(StandardCharsets.US_ASCII));
    }

    assertThat(new String(t.readUntilClose(), StandardCharsets.US_ASCII)).isEqualTo("goodbye");
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitNoTunnelState();
  }

  @Test
  void losingTheAgentClosesEstablishedTunnelsAndFailsPendingDialsAtOnce() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    TcpBackend echo = use(TcpBackend.echo());
    Blackhole hole = use(new Blackhole());
    GrpcTunnel established = fx.grpcTunnel();
    long id = established.connect(echo.address());
    GrpcTunnel pending = fx.grpcTunnel();
    long random = pending.dialAsync(hole.address());
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    agent.close();

    Packet closed = established.nextPacket(PacketType.CLOSE_RSP);
    assertThat(closed.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(closed.getCloseResponse().getError()).isEqualTo("agent agent-a disconnected");
    assertThat(established.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    Packet failed = pending.nextPacket(PacketType.DIAL_RSP);
    assertThat(failed.getDialResponse().getRandom()).isEqualTo(random);
    assertThat(failed.getDialResponse().getError()).startsWith("agent agent-a disconnected before answering the dial");
    assertThat(pending.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitNoTunnelState();
    assertThat(fx.server.ready()).isFalse();
  }

  @Test
  void losingTheClientStreamClosesTheBackendSocketAndCancelsTheAgentsDial() throws Exception {
    start();
    TunnelAgent agent = fx.agent("agent-a");
    TcpBackend backend = use(TcpBackend.manual());
    Blackhole hole = use(new Blackhole());
    GrpcTunnel established = fx.grpcTunnel();
    established.connect(backend.address());
    Socket s = use(backend.nextSocket());
    GrpcTunnel pending = fx.grpcTunnel();
    pending.dialAsync(hole.address());
    await().atMost(TunnelFixture.WAIT).until(() -> agent.pendingDials() == 1);

    established.cancel();
    pending.cancel();

    s.setSoTimeout(30_000);
    try (InputStream in = s.getInputStream()) {
      assertThat(in.read()).as("backend sees EOF").isEqualTo(-1);
    }
    // The server told the agent with DIAL_CLS: its dial is gone without any clock moving.
    fx.awaitNoTunnelState();
    assertThat(fx.serverMetric(SERVER + "dial_failure_count", "reason", "frontend_close")).isEqualTo(1);
  }

  @Test
  void drainingAgentGetsNoNewDialsWhileAnotherAgentIsConnected() throws Exception {
    start();
    TunnelAgent draining = fx.agent("agent-a");
    TunnelAgent other = fx.agent("agent-b");
    TcpBackend echo = use(TcpBackend.echo());
    GrpcTunnel before = fx.grpcTunnel();
    before.connect(echo.address());

    draining.drain();
    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.serverMetric(SERVER + "stream_packets", "segment", "from_agent", "packet_type", "DRAIN") == 1);
    double aBefore = fx.agentMetric(draining, AGENT + "dial_duration_seconds");
    double bBefore = fx.agentMetric(other, AGENT + "dial_duration_seconds");

    for (int i = 0; i < 20; i++) {
      GrpcTunnel t = fx.grpcTunnel();
      t.connect(echo.address());
      t.closeRequest();
      t.awaitClose();
    }

    assertThat(fx.agentMetric(draining, AGENT + "dial_duration_seconds")).isEqualTo(aBefore);
    assertThat(fx.agentMetric(other, AGENT + "dial_duration_seconds")).isEqualTo(bBefore + 20);
    // A tunnel opened before the drain keeps working, whichever agent carries it.
    before.write(new byte[] {42});
    assertThat(before.read(1)).containsExactly(42);
  }

  @Test
  void defaultStrategySpreadsDialsOverEveryAgent() throws Exception {
    start();
    TunnelAgent a = fx.agent("agent-a");
    TunnelAgent b = fx.agent("agent-b");
    TcpBackend echo = use(TcpBackend.echo());

    for (int i = 0; i < 40; i++) {
      GrpcTunnel t = fx.grpcTunnel();
      t.connect(echo.address());
      t.closeRequest();
      t.awaitClose();
    }

    // Uniformly random: each agent is missed by all 40 dials with probability 2^-40.
    double dialsA = fx.agentMetric(a, AGENT + "dial_duration_seconds");
    double dialsB = fx.agentMetric(b, AGENT + "dial_duration_seconds");
    assertThat(dialsA + dialsB).isEqualTo(40);
    assertThat(dialsA).isPositive();
    assertThat(dialsB).isPositive();
  }
}
