package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.WindowUpdate;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.agent.TestProxyServer.AgentStream;
import dev.portage.tunnel.wire.Metadata;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
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

/**
 * Portage flow control as the agent speaks it, against a test server that answers (or not) the
 * agent's {@code portage-flow-control} offer: credit pauses and resumes backend reads, written bytes
 * are granted back, bad credit closes only its connection, and upstream servers get the overflow rule.
 */
class AgentFlowControlIntegrationTest {
  private static final String PREFIX = AgentMetrics.PREFIX;
  private static final int SERVER_WINDOW = 128 * 1024;
  private static final int AGENT_WINDOW = 64 * 1024;

  private final FakeClock clock = new FakeClock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final AgentMetrics metrics = new AgentMetrics(registry);
  private final List<ServerConnection> connections = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private EventLoopGroup group;
  private ExecutorService blocking;
  private TestProxyServer server;

  @BeforeEach
  void setUp() throws IOException {
    group = NettyTransport.NIO.newEventLoopGroup(2, "agent-flow-test");
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

  private ServerConnection open(long window) throws IOException {
    TunnelAgentConfig cfg = TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(server.port())
        .agentId("agent-1")
        .flowControlWindow(window)
        .build();
    AgentContext ctx = new AgentContext(
        cfg, clock.timeSource(), metrics, group, NettyTransport.NIO.channelType(), null, blocking);
    ServerConnection c = ServerConnection.open(ctx, closed -> {});
    connections.add(c);
    return c;
  }

  private AgentStream connect(long window) throws Exception {
    open(window).connected().get(10, TimeUnit.SECONDS);
    return server.nextStream();
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closeables.add(c);
    return c;
  }

  private double metric(String series) {
    return TestMetrics.value(registry, PREFIX + series);
  }

  private static long dial(AgentStream s, long random, String address) throws InterruptedException {
    s.send(Packet.newBuilder()
        .setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(address).setRandom(random))
        .build());
    return s.next(PacketType.DIAL_RSP).getDialResponse().getConnectID();
  }

  private static Packet windowUpdate(long connectId, long bytes) {
    return Packet.newBuilder()
        .setType(PacketType.PORTAGE_WINDOW_UPDATE)
        .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(connectId).setBytes(bytes))
        .build();
  }

  private static Packet data(long connectId, byte[] bytes) {
    return Packet.newBuilder()
        .setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectId).setData(ByteString.copyFrom(bytes)))
        .build();
  }

  /** Starts writing {@code bytes} random bytes into {@code socket} on a virtual thread. */
  private static byte[] push(Socket socket, int bytes) {
    byte[] payload = new byte[bytes];
    new Random(bytes).nextBytes(payload);
    Thread.ofVirtual().start(() -> {
      try {
        OutputStream out = socket.getOutputStream();
        out.write(payload);
      } catch (IOException e) {
        // the test closed the socket
      }
    });
    return payload;
  }

  @Test
  void theOfferIsSentAndAnUpstreamServerThatIgnoresItGetsTheOverflowRule() throws Exception {
    AgentStream s = connect(AGENT_WINDOW);
    assertThat(s.header(Metadata.FLOW_CONTROL)).isEqualTo("1");
    assertThat(s.header(Metadata.FLOW_CONTROL_WINDOW)).isEqualTo(Integer.toString(AGENT_WINDOW));
    assertThat(metric("flow_control_server_connections")).isZero();

    // No credit is needed: the backend is read while the stream is ready, far beyond any window.
    TestBackend backend = closeLater(TestBackend.manual());
    long id = dial(s, 1, backend.address());
    Socket socket = closeLater(backend.nextSocket());
    push(socket, 4 * SERVER_WINDOW);
    long got = 0;
    while (got < 4 * SERVER_WINDOW) {
      Packet p = s.next(PacketType.DATA);
      assertThat(p.getData().getConnectID()).isEqualTo(id);
      got += p.getData().getData().size();
    }
    assertThat(metric("flow_control_pauses_total")).isZero();
  }

  @Test
  void theWindowIsValidated() {
    assertThatThrownBy(() -> TunnelAgentConfig.builder().flowControlWindow(-5).build())
        .hasMessage("flowControlWindow: -5 (expected: 0 (off) or 1..1073741824)");
    assertThat(TunnelAgentConfig.builder().build().flowControlWindow()).isEqualTo(4 << 20);
    assertThat(TunnelAgentConfig.builder().flowControlWindow(0).build().flowControl()).isFalse();
  }

  @Test
  void withFlowControlOffTheAgentOffersNothing() throws Exception {
    server.flowControlWindow(Integer.toString(SERVER_WINDOW));
    AgentStream s = connect(0);
    assertThat(s.header(Metadata.FLOW_CONTROL)).isNull();
    assertThat(s.header(Metadata.FLOW_CONTROL_WINDOW)).isNull();
  }

  @Test
  void aServerAnswerWithABadWindowFailsTheConnection() throws Exception {
    server.flowControlWindow("lots");
    ServerConnection c = open(AGENT_WINDOW);
    assertThatThrownBy(() -> c.connected().get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("the server accepted flow control with a bad window: portage-flow-control-window: lots");
  }

  @Test
  void backendReadsPauseWithoutCreditAndResumeWhenTheServerGrantsIt() throws Exception {
    server.flowControlWindow(Integer.toString(SERVER_WINDOW));
    AgentStream s = connect(AGENT_WINDOW);
    assertThat(metric("flow_control_server_connections")).isEqualTo(1);
    TestBackend backend = closeLater(TestBackend.manual());
    long id = dial(s, 1, backend.address());
    Socket socket = closeLater(backend.nextSocket());
    // Each pause comes after at most a window plus one read: enough for at least two pauses.
    byte[] payload = push(socket, 3 * (SERVER_WINDOW + ServerConnection.MAX_CHUNK));

    java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
    int packets = 0;
    long granted = 0;
    double pauses = 0;
    while (payload.length - got.size() > SERVER_WINDOW + ServerConnection.MAX_CHUNK) {
      double seen = pauses;
      await().atMost(Duration.ofSeconds(10)).until(() -> metric("flow_control_pauses_total") > seen);
      pauses = metric("flow_control_pauses_total");
      assertThat(metric("flow_control_paused_connections")).isEqualTo(1);
      // Paused: the count of DATA sent no longer moves, so receive exactly that many.
      double sent = metric("stream_packets_total{packet_type=\"DATA\",segment=\"from_agent\"}");
      for (; packets < sent; packets++) {
        s.next(PacketType.DATA).getData().getData().writeTo(got);
      }
      assertThat(got.size() - granted).as("paused at the server's window, one read at most beyond it")
          .isBetween((long) SERVER_WINDOW, (long) SERVER_WINDOW + ServerConnection.MAX_CHUNK);
      if (granted == 0) {
        s.send(windowUpdate(99, 1024)); // unknown connectID: ignored (DEBUG log)
      }
      s.send(windowUpdate(id, got.size() - granted));
      granted = got.size();
    }
    while (got.size() < payload.length) {
      Packet p = s.next();
      assertThat(p.getType()).as("packet %s", p).isEqualTo(PacketType.DATA);
      p.getData().getData().writeTo(got);
      s.send(windowUpdate(id, p.getData().getData().size()));
    }
    assertThat(got.toByteArray()).isEqualTo(payload);
    assertThat(pauses).isGreaterThanOrEqualTo(2);
    assertThat(metric("flow_control_errors_total")).isZero();
  }

  @Test
  void bytesWrittenToTheBackendAreGrantedBackInHalfWindowBatches() throws Exception {
    server.flowControlWindow(Integer.toString(SERVER_WINDOW));
    AgentStream s = connect(AGENT_WINDOW);
    TestBackend backend = closeLater(TestBackend.manual());
    long id = dial(s, 1, backend.address());
    Socket socket = closeLater(backend.nextSocket());
    byte[] chunk = new byte[AGENT_WINDOW / 4];
    for (int i = 0; i < 8; i++) {
      s.send(data(id, chunk));
    }
    InputStream in = socket.getInputStream();
    assertThat(in.readNBytes(2 * AGENT_WINDOW)).hasSize(2 * AGENT_WINDOW);
    long granted = 0;
    while (granted < 2 * AGENT_WINDOW) {
      WindowUpdate u = s.next(PacketType.PORTAGE_WINDOW_UPDATE).getWindowUpdate();
      assertThat(u.getConnectID()).isEqualTo(id);
      assertThat(u.getBytes()).isEqualTo(AGENT_WINDOW / 2);
      granted += u.getBytes();
    }
    assertThat(metric("endpoint_queue_peak_bytes")).isBetween(1.0, (double) AGENT_WINDOW + AGENT_WINDOW / 4);
  }

  @Test
  void malformedCreditClosesOnlyItsConnectionWithAClearError() throws Exception {
    server.flowControlWindow(Integer.toString(SERVER_WINDOW));
    AgentStream s = connect(AGENT_WINDOW);
    TestBackend backend = closeLater(TestBackend.manual());
    long bad = dial(s, 1, backend.address());
    Socket badSocket = closeLater(backend.nextSocket());
    long good = dial(s, 2, backend.address());
    Socket goodSocket = closeLater(backend.nextSocket());

    s.send(windowUpdate(bad, -1));
    Packet close = s.next(PacketType.CLOSE_RSP);
    assertThat(close.getCloseResponse().getConnectID()).isEqualTo(bad);
    assertThat(close.getCloseResponse().getError()).isEqualTo(
        "agent: connection " + bad + " closed: flow control violated: window update of -1 bytes (expected: > 0)");
    assertThat(badSocket.getInputStream().read()).as("the backend socket is closed").isEqualTo(-1);

    // Credit for bytes never sent is malformed too.
    s.send(windowUpdate(good, 1));
    assertThat(s.next(PacketType.CLOSE_RSP).getCloseResponse().getError())
        .contains("window update of 1 bytes but only 0 are unacknowledged");
    assertThat(goodSocket.getInputStream().read()).isEqualTo(-1);
    assertThat(metric("flow_control_errors_total")).isEqualTo(2);
    await().atMost(Duration.ofSeconds(10)).until(() -> metric("open_endpoint_connections") == 0);
  }

  @Test
  void dataBeyondTheWindowIsAProtocolViolation() throws Exception {
    server.flowControlWindow(Integer.toString(SERVER_WINDOW));
    AgentStream s = connect(1);
    TestBackend backend = closeLater(TestBackend.manualWithSmallBuffer());
    long id = dial(s, 1, backend.address());
    closeLater(backend.nextSocket()); // never reads
    byte[] big = new byte[1 << 20];
    // Socket buffers take a few MiB; 1 byte of window plus the 4 MiB packet allowance cannot hold 16 MiB.
    for (int i = 0; i < 16; i++) {
      s.send(data(id, big));
    }
    Packet close;
    do {
      close = s.next(); // credit for what the socket took comes first
    } while (close.getType() == PacketType.PORTAGE_WINDOW_UPDATE);
    assertThat(close.getType()).isEqualTo(PacketType.CLOSE_RSP);
    assertThat(close.getCloseResponse().getError()).contains("flow control violated: server sent");
    assertThat(metric("endpoint_queue_overflow_total")).isZero();
    assertThat(metric("flow_control_errors_total")).isEqualTo(1);
  }
}
