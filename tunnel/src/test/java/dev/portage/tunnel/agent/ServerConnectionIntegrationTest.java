package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseDial;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.agent.TestProxyServer.AgentStream;
import dev.portage.tunnel.wire.Metadata;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One agent server connection against a test proxy server and real backend sockets on loopback. */
class ServerConnectionIntegrationTest {
  private static final String PREFIX = AgentMetrics.PREFIX;

  private final FakeClock clock = new FakeClock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final AgentMetrics metrics = new AgentMetrics(registry);
  private final List<ServerConnection> connections = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private EventLoopGroup group;
  private ExecutorService blocking;
  private TestProxyServer server;

  @TempDir Path tmp;

  @BeforeEach
  void setUp() throws IOException {
    group = NettyTransport.NIO.newEventLoopGroup(2, "agent-test");
    blocking = Executors.newVirtualThreadPerTaskExecutor();
    server = new TestProxyServer("server-1", 1);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (ServerConnection c : connections) {
      c.close().get(10, TimeUnit.SECONDS);
    }
    for (AutoCloseable c : closeables) {
      c.close();
    }
    server.close();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    blocking.shutdownNow();
  }

  private TunnelAgentConfig.Builder config() {
    return TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(server.port())
        .agentId("agent-1");
  }

  private ServerConnection open(TunnelAgentConfig cfg) throws IOException {
    AgentContext ctx = new AgentContext(
        cfg, clock.timeSource(), metrics, group, NettyTransport.NIO.channelType(), null, blocking);
    ServerConnection c = ServerConnection.open(ctx, closed -> {});
    connections.add(c);
    return c;
  }

  private AgentStream connect(TunnelAgentConfig cfg) throws Exception {
    ServerConnection c = open(cfg);
    c.connected().get(10, TimeUnit.SECONDS);
    return server.nextStream();
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closeables.add(c);
    return c;
  }

  private static Packet dialReq(long random, String address) {
    return Packet.newBuilder()
        .setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(address).setRandom(random))
        .build();
  }

  private static Packet data(long connectId, byte[] bytes) {
    return Packet.newBuilder()
        .setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectId).setData(ByteString.copyFrom(bytes)))
        .build();
  }

  private static Packet closeReq(long connectId) {
    return Packet.newBuilder()
        .setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectId))
        .build();
  }

  private static Packet dialCls(long random) {
    return Packet.newBuilder()
        .setType(PacketType.DIAL_CLS)
        .setCloseDial(CloseDial.newBuilder().setRandom(random))
        .build();
  }

  /** Dials {@code address} through the agent and returns the connectID from a successful DIAL_RSP. */
  private static long dial(AgentStream s, long random, String address) throws InterruptedException {
    s.send(dialReq(random, address));
    DialResponse rsp = s.next(PacketType.DIAL_RSP).getDialResponse();
    assertThat(rsp.getRandom()).isEqualTo(random);
    assertThat(rsp.getError()).isEmpty();
    assertThat(rsp.getConnectID()).isPositive();
    return rsp.getConnectID();
  }

  // ---- handshake ----

  @Test
  void sendsAgentMetadataAndReadsServerHeaders() throws Exception {
    server.serverCount(3);
    ServerConnection c = open(config().agentIdentifiers("host=node-1&ipv4=10.0.0.7").build());
    assertThat(c.connected().get(10, TimeUnit.SECONDS)).isSameAs(c);
    AgentStream s = server.nextStream();

    assertThat(s.headers.getAll(Metadata.AGENT_ID)).containsExactly("agent-1");
    assertThat(s.headers.getAll(Metadata.AGENT_IDENTIFIERS)).containsExactly("host=node-1&ipv4=10.0.0.7");
    assertThat(s.headers.containsKey(Metadata.AUTHORIZATION)).isFalse();
    assertThat(c.serverId()).isEqualTo("server-1");
    assertThat(c.serverCount()).isEqualTo(3);
    assertThat(c.isReady()).isTrue();
  }

  @Test
  void emptyIdentifiersAreNotSent() throws Exception {
    AgentStream s = connect(config().agentIdentifiers("").build());
    assertThat(s.headers.containsKey(Metadata.AGENT_IDENTIFIERS)).isFalse();
  }

  @Test
  void bearerTokenIsReReadOnEveryConnect() throws Exception {
    Path token = tmp.resolve("token");
    Files.writeString(token, "first-token\n");
    TunnelAgentConfig cfg = config().serviceAccountTokenPath(token).build();
    assertThat(connect(cfg).header(Metadata.AUTHORIZATION)).isEqualTo("Bearer first-token");

    Files.writeString(token, "rotated-token");
    assertThat(connect(cfg).header(Metadata.AUTHORIZATION)).isEqualTo("Bearer rotated-token");
  }

  @Test
  void missingTokenFileFailsTheConnect() {
    TunnelAgentConfig cfg = config().serviceAccountTokenPath(tmp.resolve("absent")).build();
    assertThatThrownBy(() -> open(cfg)).isInstanceOf(java.nio.file.NoSuchFileException.class);
  }

  @Test
  void badServerCountHeaderFailsTheConnection() throws Exception {
    server.serverCount(-1);
    ServerConnection c = open(config().build());
    assertThatThrownBy(() -> c.connected().get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("servercount: -1");
    c.closedFuture().get(10, TimeUnit.SECONDS);
    assertThat(c.isReady()).isFalse();
  }

  // ---- dial ----

  @Test
  void dialSucceedsWithConnectIdsCountingFromOne() throws Exception {
    TestBackend backend = closeLater(TestBackend.echo());
    AgentStream s = connect(config().build());

    assertThat(dial(s, 77, backend.address())).isEqualTo(1);
    assertThat(dial(s, 78, backend.address())).isEqualTo(2);
    assertThat(TestMetrics.value(registry, PREFIX + "open_endpoint_connections")).isEqualTo(2);
    assertThat(TestMetrics.value(registry, PREFIX + "dial_duration_seconds_count")).isEqualTo(2);
    assertThat(TestMetrics.value(registry,
        PREFIX + "stream_packets_total{packet_type=\"DIAL_REQ\",segment=\"to_agent\"}")).isEqualTo(2);
    assertThat(TestMetrics.value(registry,
        PREFIX + "stream_packets_total{packet_type=\"DIAL_RSP\",segment=\"from_agent\"}")).isEqualTo(2);
  }

  @Test
  void refusedDialAnswersWithError() throws Exception {
    int closedPort;
    try (ServerSocket probe = new ServerSocket(0)) {
      closedPort = probe.getLocalPort();
    }
    AgentStream s = connect(config().build());
    s.send(dialReq(5, "127.0.0.1:" + closedPort));

    DialResponse rsp = s.next(PacketType.DIAL_RSP).getDialResponse();
    assertThat(rsp.getRandom()).isEqualTo(5);
    assertThat(rsp.getConnectID()).isZero();
    assertThat(rsp.getError()).isEqualTo("dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused");
    assertThat(TestMetrics.value(registry, PREFIX + "endpoint_dial_failure_total{reason=\"unknown\"}"))
        .isEqualTo(1);
  }

  @Test
  void dialTimesOutOnTheInjectedClock() throws Exception {
    Blackhole hole = closeLater(new Blackhole());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    s.send(dialReq(9, hole.address()));
    await().atMost(Duration.ofSeconds(10)).until(() -> c.pendingDials() == 1);
    assertThat(s.poll(Duration.ofMillis(100))).as("no answer before the timeout").isNull();

    clock.advance(Duration.ofSeconds(5));

    DialResponse rsp = s.next(PacketType.DIAL_RSP).getDialResponse();
    assertThat(rsp.getRandom()).isEqualTo(9);
    assertThat(rsp.getError()).isEqualTo("dial tcp " + hole.address() + ": i/o timeout");
    assertThat(c.pendingDials()).isZero();
    assertThat(TestMetrics.value(registry, PREFIX + "endpoint_dial_failure_total{reason=\"timeout\"}"))
        .isEqualTo(1);
  }

  @Test
  void dialCloseCancelsThePendingDialWithoutAnswer() throws Exception {
    Blackhole hole = closeLater(new Blackhole());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    s.send(dialReq(11, hole.address()));
    await().atMost(Duration.ofSeconds(10)).until(() -> c.pendingDials() == 1);

    s.send(dialCls(11));
    await().atMost(Duration.ofSeconds(10)).until(() -> c.pendingDials() == 0);
    clock.advance(Duration.ofSeconds(10));

    // Only the unknown-ID answer below comes back: the cancelled dial sent nothing.
    s.send(closeReq(4242));
    assertThat(s.next(PacketType.CLOSE_RSP).getCloseResponse().getConnectID()).isEqualTo(4242);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void badDialRequestsAnswerWithErrors() throws Exception {
    AgentStream s = connect(config().build());
    s.send(dialReq(1, "no-port-here"));
    assertThat(s.next(PacketType.DIAL_RSP).getDialResponse().getError())
        .isEqualTo("dial tcp address no-port-here: missing port in address");

    s.send(dialReq(2, "127.0.0.1:99999"));
    assertThat(s.next(PacketType.DIAL_RSP).getDialResponse().getError())
        .isEqualTo("dial tcp address 127.0.0.1:99999: invalid port");

    s.send(Packet.newBuilder()
        .setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("udp").setAddress("127.0.0.1:53").setRandom(3))
        .build());
    DialResponse rsp = s.next(PacketType.DIAL_RSP).getDialResponse();
    assertThat(rsp.getRandom()).isEqualTo(3);
    assertThat(rsp.getError()).isEqualTo("dial udp 127.0.0.1:53: unknown network udp");
  }

  @Test
  void unknownHostAnswersWithLookupError() throws Exception {
    AgentStream s = connect(config().build());
    s.send(dialReq(4, "no-such-host.invalid:80"));
    DialResponse rsp = s.next(PacketType.DIAL_RSP).getDialResponse();
    assertThat(rsp.getRandom()).isEqualTo(4);
    assertThat(rsp.getError()).isEqualTo("dial tcp: lookup no-such-host.invalid: no such host");
  }

  @Test
  void hostNamesAreResolved() throws Exception {
    TestBackend backend = closeLater(TestBackend.echo());
    AgentStream s = connect(config().build());
    assertThat(dial(s, 6, "localhost:" + backend.port())).isEqualTo(1);
  }

  // ---- data ----

  @Test
  void oneMebibyteRoundTripsThroughAnEchoBackend() throws Exception {
    TestBackend backend = closeLater(TestBackend.echo());
    AgentStream s = connect(config().build());
    long id = dial(s, 21, backend.address());

    byte[] payload = new byte[1 << 20];
    new Random(42).nextBytes(payload);
    for (int off = 0; off < payload.length; off += 16 * 1024) {
      s.send(data(id, java.util.Arrays.copyOfRange(payload, off, off + 16 * 1024)));
    }
    ByteArrayOutputStream echoed = new ByteArrayOutputStream();
    while (echoed.size() < payload.length) {
      Data d = s.next(PacketType.DATA).getData();
      assertThat(d.getConnectID()).isEqualTo(id);
      assertThat(d.getData().size()).isLessThanOrEqualTo(ServerConnection.MAX_CHUNK);
      d.getData().writeTo(echoed);
    }
    assertThat(sha256(echoed.toByteArray())).isEqualTo(sha256(payload));
  }

  @Test
  void dataForUnknownConnectIdIsAnsweredAndConnectIdZeroIsDropped() throws Exception {
    AgentStream s = connect(config().build());
    s.send(data(0, new byte[] {1}));
    s.send(data(999, new byte[] {1}));

    Packet p = s.next(PacketType.CLOSE_RSP);
    assertThat(p.getCloseResponse().getConnectID()).isEqualTo(999);
    assertThat(p.getCloseResponse().getError()).isEqualTo("unrecognized connectID");
    assertThat(s.poll(Duration.ofMillis(100))).isNull();
  }

  @Test
  void remoteEofSendsRemainingDataThenUnsolicitedCloseResponse() throws Exception {
    TestBackend backend = closeLater(TestBackend.manual());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    long id = dial(s, 31, backend.address());
    try (Socket socket = backend.nextSocket()) {
      socket.getOutputStream().write("bye".getBytes(StandardCharsets.US_ASCII));
    }

    Packet d = s.next(PacketType.DATA);
    assertThat(d.getData().getData().toStringUtf8()).isEqualTo("bye");
    Packet close = s.next(PacketType.CLOSE_RSP);
    assertThat(close.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(close.getCloseResponse().getError()).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> c.openEndpointConnections() == 0);

    s.send(data(id, new byte[] {1}));
    assertThat(s.next(PacketType.CLOSE_RSP).getCloseResponse().getError()).isEqualTo("unrecognized connectID");
  }

  @Test
  void closeRequestFlushesDataClosesTheSocketAndAnswers() throws Exception {
    TestBackend backend = closeLater(TestBackend.manual());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    long id = dial(s, 41, backend.address());
    Socket socket = closeLater(backend.nextSocket());
    socket.setSoTimeout(10_000);

    s.send(data(id, "last words".getBytes(StandardCharsets.US_ASCII)));
    s.send(closeReq(id));

    Packet p = s.next(PacketType.CLOSE_RSP);
    assertThat(p.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(p.getCloseResponse().getError()).isEmpty();
    assertThat(readToEof(socket.getInputStream())).isEqualTo("last words");
    assertThat(c.openEndpointConnections()).isZero();

    s.send(closeReq(id));
    Packet again = s.next(PacketType.CLOSE_RSP);
    assertThat(again.getCloseResponse().getConnectID()).isEqualTo(id);
    assertThat(again.getCloseResponse().getError()).isEqualTo("Unknown connectID");
    assertThat(TestMetrics.value(registry, PREFIX + "open_endpoint_connections")).isZero();
  }

  @Test
  void slowBackendDoesNotStallOtherConnections() throws Exception {
    TestBackend slow = closeLater(TestBackend.manualWithSmallBuffer());
    TestBackend echo = closeLater(TestBackend.echo());
    ServerConnection c = open(config().xfrChannelSize(8).build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    long stalled = dial(s, 51, slow.address());
    Socket stalledSocket = closeLater(slow.nextSocket()); // never read
    long fast = dial(s, 52, echo.address());

    // Far more than the stalled socket, the kernel buffers and its queue of 8 packets can hold.
    byte[] chunk = new byte[32 * 1024];
    Packet overflowClose = null;
    for (int i = 0; i < 400 && overflowClose == null; i++) {
      s.send(data(stalled, chunk));
      if (i % 20 == 0) {
        overflowClose = s.poll(Duration.ofMillis(20));
      }
    }
    // The healthy connection keeps flowing while the stalled one is backed up.
    s.send(data(fast, "ping".getBytes(StandardCharsets.US_ASCII)));
    boolean sawPong = false;
    while (!sawPong || overflowClose == null) {
      Packet p = s.next();
      if (p.getType() == PacketType.CLOSE_RSP) {
        assertThat(p.getCloseResponse().getConnectID()).isEqualTo(stalled);
        if (overflowClose == null) {
          overflowClose = p;
        } else {
          // DATA the test sent after the close crossed it on the wire
          assertThat(p.getCloseResponse().getError()).isEqualTo("unrecognized connectID");
        }
      } else {
        assertThat(p.getType()).isEqualTo(PacketType.DATA);
        assertThat(p.getData().getConnectID()).isEqualTo(fast);
        assertThat(p.getData().getData().toStringUtf8()).isEqualTo("ping");
        sawPong = true;
      }
    }
    assertThat(overflowClose.getCloseResponse().getConnectID()).isEqualTo(stalled);
    assertThat(overflowClose.getCloseResponse().getError()).contains("backend too slow");
    assertThat(TestMetrics.value(registry, PREFIX + "endpoint_queue_overflow_total")).isEqualTo(1);
    assertThat(c.openEndpointConnections()).isEqualTo(1);

    // The stalled socket was closed alone; the fast one still works.
    stalledSocket.setSoTimeout(10_000);
    InputStream in = stalledSocket.getInputStream();
    byte[] sink = new byte[64 * 1024];
    while (in.read(sink) >= 0) {
      // drain until the agent's close arrives
    }
    s.send(data(fast, "again".getBytes(StandardCharsets.US_ASCII)));
    assertThat(s.next(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("again");
  }

  @Test
  void slowServerStreamPausesBackendReadsWithoutLosingData() throws Exception {
    // The backend pushes 4 MiB at once; the agent reads only while the stream is ready, so nothing is
    // lost or reordered even though the test server reads its queue lazily.
    TestBackend backend = closeLater(TestBackend.manual());
    AgentStream s = connect(config().build());
    long id = dial(s, 61, backend.address());
    Socket socket = closeLater(backend.nextSocket());
    byte[] payload = new byte[4 << 20];
    new Random(7).nextBytes(payload);
    Thread writer = Thread.ofVirtual().start(() -> {
      try {
        OutputStream out = socket.getOutputStream();
        out.write(payload);
        socket.shutdownOutput();
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    while (true) {
      Packet p = s.next();
      if (p.getType() == PacketType.CLOSE_RSP) {
        assertThat(p.getCloseResponse().getConnectID()).isEqualTo(id);
        break;
      }
      assertThat(p.getData().getData().size()).isLessThanOrEqualTo(ServerConnection.MAX_CHUNK);
      p.getData().getData().writeTo(got);
    }
    writer.join(10_000);
    assertThat(sha256(got.toByteArray())).isEqualTo(sha256(payload));
  }

  // ---- lifecycle ----

  @Test
  void drainSendsOneDrainPacket() throws Exception {
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    c.drain();
    c.drain();
    Packet p = s.next(PacketType.DRAIN);
    assertThat(p.hasDrain()).isTrue();
    assertThat(s.poll(Duration.ofMillis(100))).isNull();
  }

  @Test
  void streamEndClosesEveryBackendSocket() throws Exception {
    TestBackend backend = closeLater(TestBackend.manual());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    dial(s, 71, backend.address());
    dial(s, 72, backend.address());
    Socket a = closeLater(backend.nextSocket());
    Socket b = closeLater(backend.nextSocket());

    s.complete();

    c.closedFuture().get(10, TimeUnit.SECONDS);
    assertThat(c.openEndpointConnections()).isZero();
    assertThat(c.isReady()).isFalse();
    a.setSoTimeout(10_000);
    b.setSoTimeout(10_000);
    assertThat(a.getInputStream().read()).isEqualTo(-1);
    assertThat(b.getInputStream().read()).isEqualTo(-1);
    assertThat(TestMetrics.value(registry, PREFIX + "open_endpoint_connections")).isZero();
  }

  @Test
  void thousandDialCloseCyclesLeaveNoConnectionBehind() throws Exception {
    TestBackend backend = closeLater(TestBackend.echo());
    ServerConnection c = open(config().build());
    c.connected().get(10, TimeUnit.SECONDS);
    AgentStream s = server.nextStream();
    int closedByServer = 0;
    for (int batch = 0; batch < 20; batch++) {
      List<Long> ids = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        s.send(dialReq(batch * 50L + i + 1, backend.address()));
      }
      for (int i = 0; i < 50; i++) {
        ids.add(s.next(PacketType.DIAL_RSP).getDialResponse().getConnectID());
      }
      for (long id : ids) {
        s.send(closeReq(id));
      }
      for (int i = 0; i < 50; i++) {
        assertThat(s.next(PacketType.CLOSE_RSP).getCloseResponse().getError()).isEmpty();
        closedByServer++;
      }
    }
    assertThat(closedByServer).isEqualTo(1000);
    await().atMost(Duration.ofSeconds(10)).until(() -> c.openEndpointConnections() == 0 && c.pendingDials() == 0);
    assertThat(TestMetrics.value(registry, PREFIX + "open_endpoint_connections")).isZero();
    assertThat(TestMetrics.value(registry, PREFIX + "dial_duration_seconds_count")).isEqualTo(1000);
  }

  private static String readToEof(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
  }

  private static byte[] sha256(byte[] b) throws Exception {
    return MessageDigest.getInstance("SHA-256").digest(b);
  }
}
