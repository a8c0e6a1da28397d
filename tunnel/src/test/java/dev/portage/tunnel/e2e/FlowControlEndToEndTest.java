package dev.portage.tunnel.e2e;

import static dev.portage.tunnel.e2e.MetricValues.AGENT;
import static dev.portage.tunnel.e2e.MetricValues.SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.server.FrontendMode;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Portage per-connection flow control end to end (real server, real agent, real sockets): slow readers
 * and slow backends get every byte, paced by credit instead of cut, with queues bounded by the window;
 * and the overflow rule when either side has flow control off.
 */
class FlowControlEndToEndTest {
  private static final int MIB = 1024 * 1024;
  private static final int WINDOW = 4 * MIB; // the default on both sides
  private static final long QUEUE_BOUND = WINDOW + 64 * 1024; // the window and one packet
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

  /**
   * Waits (polling every millisecond) until the paused-connections gauge says the sending side is
   * paused for lack of credit. (Waiting for a new pause after each burst would not do: the kernel
   * wakes a writer only once a good part of its full send buffer drained, so one burst may not move
   * the pipeline at all.)
   */
  private static void awaitPaused(DoubleSupplier pausedGauge, long got) {
    await("sender paused after " + got + " bytes read").atMost(Duration.ofSeconds(10))
        .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
        .until(() -> pausedGauge.getAsDouble() == 1);
  }

  private void assertNothingCutAndQueuesBounded(TunnelAgent agent) {
    assertThat(fx.serverMetric(SERVER + "receive_queue_overflows")).isZero();
    assertThat(fx.serverMetric(SERVER + "flow_control_errors")).isZero();
    assertThat(fx.agentMetric(agent, AGENT + "endpoint_queue_overflow")).isZero();
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_errors")).isZero();
    assertThat(fx.serverMetric(SERVER + "connection_queue_peak_bytes")).isLessThanOrEqualTo(QUEUE_BOUND);
    assertThat(fx.agentMetric(agent, AGENT + "endpoint_queue_peak_bytes")).isLessThanOrEqualTo(QUEUE_BOUND);
  }

  @Test
  void slowReaderGetsA64MebibyteDownloadInFullWhileTheAgentPausesItsBackend() throws Exception {
    fx = TunnelFixture.start(FrontendMode.HTTP_CONNECT);
    TunnelAgent agent = fx.agent("agent-a");
    assertThat(fx.serverMetric(SERVER + "flow_control_streams")).isEqualTo(1);
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_server_connections")).isEqualTo(1);
    int total = 64 * MIB;
    TcpBackend source = use(TcpBackend.source(total));
    ConnectClient down = use(ConnectClient.tunnel(fx.proxyPort(), source.address()));
    InputStream in = down.in();
    MessageDigest received = MessageDigest.getInstance("SHA-256");
    byte[] burst = new byte[MIB];
    long got = 0;
    // The client reads one 1 MiB burst only while the agent has the backend paused: it is always the
    // slower side, for the first half of the download (the rest may already sit in socket buffers).
    while (got < total / 2) {
      awaitPaused(() -> fx.agentMetric(agent, AGENT + "flow_control_paused_connections"), got);
      int n = in.readNBytes(burst, 0, burst.length);
      received.update(burst, 0, n);
      got += n;
    }
    for (int n; (n = in.read(burst)) >= 0; got += n) {
      received.update(burst, 0, n);
    }
    assertThat(got).isEqualTo(total);
    assertThat(received.digest())
        .isEqualTo(MessageDigest.getInstance("SHA-256").digest(TcpBackend.payload(1, total)));
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_pauses")).as("pause/resume cycles").isGreaterThanOrEqualTo(8);
    assertNothingCutAndQueuesBounded(agent);
    fx.awaitNoTunnelState();
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_paused_connections")).isZero();
  }

  @Test
  void uploadToASlowBackendArrivesInFullWhileTheServerPausesTheClient() throws Exception {
    fx = TunnelFixture.start(FrontendMode.HTTP_CONNECT);
    TunnelAgent agent = fx.agent("agent-a");
    int total = 64 * MIB;
    TcpBackend backend = use(TcpBackend.manual());
    ConnectClient up = use(ConnectClient.tunnel(fx.proxyPort(), backend.address()));
    Socket backendSocket = backend.nextSocket();
    byte[] payload = TcpBackend.payload(7, total);
    Thread writer = Thread.ofVirtual().start(() -> {
      try {
        up.write(payload);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    InputStream in = backendSocket.getInputStream();
    MessageDigest received = MessageDigest.getInstance("SHA-256");
    byte[] burst = new byte[MIB];
    long got = 0;
    while (got < total / 2) {
      awaitPaused(() -> fx.serverMetric(SERVER + "flow_control_paused_connections", "service_method", "HTTP-CONNECT"), got);
      int n = in.readNBytes(burst, 0, burst.length);
      received.update(burst, 0, n);
      got += n;
    }
    while (got < total) {
      int n = in.readNBytes(burst, 0, (int) Math.min(burst.length, total - got));
      received.update(burst, 0, n);
      got += n;
    }
    writer.join(Duration.ofSeconds(10));
    assertThat(writer.isAlive()).isFalse();
    assertThat(received.digest()).isEqualTo(MessageDigest.getInstance("SHA-256").digest(payload));
    assertThat(fx.serverMetric(SERVER + "flow_control_pauses", "service_method", "HTTP-CONNECT"))
        .as("pause/resume cycles").isGreaterThanOrEqualTo(8);
    assertNothingCutAndQueuesBounded(agent);
    up.close();
    fx.awaitNoTunnelState();
    assertThat(fx.serverMetric(SERVER + "flow_control_paused_connections", "service_method", "HTTP-CONNECT")).isZero();
  }

  @Test
  void grpcClientThatRequestsSlowlyGetsADownloadInFullWhileTheAgentPausesItsBackend() throws Exception {
    fx = TunnelFixture.start(FrontendMode.GRPC);
    TunnelAgent agent = fx.agent("agent-a");
    int total = 32 * MIB;
    TcpBackend source = use(TcpBackend.source(total));
    BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    ClientCall<Packet, Packet> call = fx.frontendChannel().newCall(ProxyServiceGrpc.getProxyMethod(), CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(Packet p) {
        events.add(p);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        events.add(status);
      }
    }, new Metadata());
    use(() -> call.cancel("test done", null));
    call.request(1);
    call.sendMessage(Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(source.address()).setRandom(1))
        .build());
    Packet rsp = (Packet) events.poll(10, TimeUnit.SECONDS);
    assertThat(rsp.getDialResponse().getError()).isEmpty();
    MessageDigest received = MessageDigest.getInstance("SHA-256");
    long got = 0;
    // Each burst requests 32 packets (at most 1 MiB), only while the agent has the backend paused.
    while (got < total / 2) {
      awaitPaused(() -> fx.agentMetric(agent, AGENT + "flow_control_paused_connections"), got);
      call.request(32);
      for (int i = 0; i < 32; i++) {
        Data d = ((Packet) events.poll(10, TimeUnit.SECONDS)).getData();
        received.update(d.getData().asReadOnlyByteBuffer());
        got += d.getData().size();
      }
    }
    call.request(Integer.MAX_VALUE);
    while (got < total) {
      Packet p = (Packet) events.poll(10, TimeUnit.SECONDS);
      assertThat(p.getType()).as("packet %s", p).isEqualTo(PacketType.DATA);
      received.update(p.getData().getData().asReadOnlyByteBuffer());
      got += p.getData().getData().size();
    }
    assertThat(((Packet) events.poll(10, TimeUnit.SECONDS)).getType()).isEqualTo(PacketType.CLOSE_RSP);
    assertThat(received.digest())
        .isEqualTo(MessageDigest.getInstance("SHA-256").digest(TcpBackend.payload(1, total)));
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_pauses")).as("pause/resume cycles").isGreaterThanOrEqualTo(8);
    assertNothingCutAndQueuesBounded(agent);
  }

  @Test
  void serverWithFlowControlOffFallsBackToTheOverflowRule() throws Exception {
    fx = TunnelFixture.start(FrontendMode.HTTP_CONNECT, b -> b.flowControlWindow(0));
    TunnelAgent agent = fx.agent("agent-a");
    assertThat(fx.serverMetric(SERVER + "flow_control_streams")).isZero();
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_server_connections")).isZero();
    stuckReaderIsCutAndAnotherTunnelCompletes();
  }

  @Test
  void agentWithFlowControlOffFallsBackToTheOverflowRule() throws Exception {
    fx = TunnelFixture.start(FrontendMode.HTTP_CONNECT);
    TunnelAgent agent = fx.agent("agent-a", b -> b.flowControlWindow(0));
    assertThat(fx.serverMetric(SERVER + "flow_control_streams")).isZero();
    assertThat(fx.agentMetric(agent, AGENT + "flow_control_server_connections")).isZero();
    stuckReaderIsCutAndAnotherTunnelCompletes();
  }

  /** The documented fallback: a client that never reads is closed alone once its server queue overflows. */
  private void stuckReaderIsCutAndAnotherTunnelCompletes() throws Exception {
    TcpBackend source = use(TcpBackend.source(32 * MIB));
    TcpBackend fastSource = use(TcpBackend.source(8 * MIB));
    ConnectClient stuck = use(ConnectClient.tunnel(fx.proxyPort(), source.address()));
    await().atMost(TunnelFixture.WAIT).until(() -> source.acceptedCount() == 1);
    ConnectClient fast = use(ConnectClient.tunnel(fx.proxyPort(), fastSource.address()));
    assertThat(fast.read(8 * MIB)).isEqualTo(TcpBackend.payload(1, 8 * MIB));
    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.serverMetric(SERVER + "receive_queue_overflows", "service_method", "HTTP-CONNECT") == 1);
    assertThat(fast.readToEof()).isEmpty();
    stuck.close();
    fx.awaitNoTunnelState();
  }
}
