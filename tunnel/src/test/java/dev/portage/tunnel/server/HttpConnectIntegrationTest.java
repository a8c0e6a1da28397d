package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.time.FakeClock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HttpConnectIntegrationTest {
  private static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";
  private ServerFixture fx;
  private Socket socket;

  @TempDir Path tmp;

  @AfterEach
  void tearDown() throws Exception {
    if (socket != null) {
      socket.close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  private ServerFixture start(UnaryOperator<TunnelServerConfig.Builder> c, FakeClock clock) {
    fx = new ServerFixture(b -> c.apply(b.mode(FrontendMode.HTTP_CONNECT)), clock == null ? null : clock.timeSource());
    return fx;
  }

  private Socket connect() throws IOException {
    InetSocketAddress a = (InetSocketAddress) fx.server.frontendAddress();
    socket = new Socket("127.0.0.1", a.getPort());
    socket.setSoTimeout(10_000);
    return socket;
  }

  private static void write(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
    s.getOutputStream().flush();
  }

  private static String readExactly(InputStream in, int n) throws IOException {
    byte[] b = in.readNBytes(n);
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  private static String readToEof(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    in.transferTo(out);
    return out.toString(StandardCharsets.ISO_8859_1);
  }

  private static String errorResponse(int status, String reason, String body) {
    return "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: "
        + body.getBytes(StandardCharsets.UTF_8).length + "\r\nConnection: close\r\n\r\n" + body;
  }

  /** Sends CONNECT and answers the dial on {@code agent}; returns the DIAL_REQ the agent saw. */
  private Packet connectThrough(TestStream agent, Socket s, long connectID) throws IOException {
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\nHost: 10.0.0.5:443\r\n\r\n");
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    assertThat(readExactly(s.getInputStream(), ESTABLISHED.length())).isEqualTo(ESTABLISHED);
    return req;
  }

  @Test
  void connectAnswersExactly200ThenRelaysRawBytesAndClosesOnEof() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    Packet req = connectThrough(agent, s, 3);
    assertThat(req.getDialRequest().getAddress()).isEqualTo("10.0.0.5:443");
    assertThat(req.getDialRequest().getProtocol()).isEqualTo("tcp");
    assertThat(req.getDialRequest().getRandom()).isNotZero();

    write(s, "ping");
    Packet data = agent.nextPacket(PacketType.DATA);
    assertThat(data.getData().getConnectID()).isEqualTo(3);
    assertThat(data.getData().getData().toStringUtf8()).isEqualTo("ping");
    agent.send(Packets.data(3, "pong".getBytes(StandardCharsets.UTF_8)));
    assertThat(readExactly(s.getInputStream(), 4)).isEqualTo("pong");

    s.shutdownOutput();
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(3);
    agent.send(Packets.data(3, "bye".getBytes(StandardCharsets.UTF_8)));
    agent.send(Packets.closeRsp(3));
    assertThat(readToEof(s.getInputStream())).isEqualTo("bye");
    fx.awaitMapsEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_http_connections") == 0);
  }

  @Test
  void bytesSentRightBehindTheHeadAreForwardedOnceEstablished() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    write(s, "CONNECT db:5432 HTTP/1.1\r\n\r\nearly");
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    assertThat(req.getDialRequest().getAddress()).isEqualTo("db:5432");
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), 1));
    assertThat(readExactly(s.getInputStream(), ESTABLISHED.length())).isEqualTo(ESTABLISHED);
    assertThat(agent.nextPacket(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("early");
  }

  @Test
  void httpConnectModeCanAlsoServeGrpcFrontends() throws Exception {
    start(b -> b.grpcFrontendPort(0), null);
    assertThat(fx.server.grpcFrontendAddress()).isNotNull();
    assertThat(fx.server.grpcFrontendAddress().getPort())
        .isNotEqualTo(((InetSocketAddress) fx.server.frontendAddress()).getPort());
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    connectThrough(agent, s, 1);
    assertThat(fx.server.config().grpcFrontendPort()).isZero();
  }

  @Test
  void grpcFrontendPortNeedsHttpConnectMode() {
    assertThatThrownBy(() -> TunnelServerConfig.builder().ephemeralPorts().grpcFrontendPort(0).build())
        .hasMessageContaining("grpcFrontendPort: 0 (expected: only with mode http-connect");
  }

  @Test
  void otherMethodsGet405() throws Exception {
    start(b -> b, null);
    Socket s = connect();
    write(s, "GET /success HTTP/1.1\r\nHost: example\r\n\r\n");
    assertThat(readToEof(s.getInputStream()))
        .isEqualTo(errorResponse(405, "Method Not Allowed", "this proxy only supports CONNECT passthrough"));
  }

  @Test
  void requestLineIsReadAsStrictlyAsGoDoes() throws Exception {
    start(b -> b, null);
    InetSocketAddress a = (InetSocketAddress) fx.server.frontendAddress();
    String malformed = "malformed HTTP request line (expected: METHOD SP target SP HTTP/1.1)";
    for (String line : java.util.List.of("CONNECT  10.0.0.5:443 HTTP/1.1", "CONNECT 10.0.0.5:443  HTTP/1.1",
        "CONNECT\t10.0.0.5:443 HTTP/1.1", " CONNECT 10.0.0.5:443 HTTP/1.1", "CONNECT 10.0.0.5:443 HTTP/1.1 ",
        "CONNECT 10.0.0.5:443 http/1.1", "CONNECT 10.0.0.5:443", "CONNECT 10.0.0.5:443 HTTP/1.1 x",
        "CONNECT 10.0.0.\u00e95:443 HTTP/1.1", "")) {
      try (Socket s = new Socket("127.0.0.1", a.getPort())) {
        s.setSoTimeout(10_000);
        write(s, line + "\r\nHost: 10.0.0.5:443\r\n\r\n");
        assertThat(readToEof(s.getInputStream())).as(line).isEqualTo(errorResponse(400, "Bad Request", malformed));
      }
    }
    for (String version : java.util.List.of("HTTP/2.0", "HTTP/0.9", "HTTP/1.2")) {
      try (Socket s = new Socket("127.0.0.1", a.getPort())) {
        s.setSoTimeout(10_000);
        write(s, "CONNECT 10.0.0.5:443 " + version + "\r\n\r\n");
        assertThat(readToEof(s.getInputStream())).as(version).isEqualTo(errorResponse(505,
            "HTTP Version Not Supported", "unsupported protocol version " + version + " (expected: HTTP/1.0 or HTTP/1.1)"));
      }
    }
    try (Socket s = new Socket("127.0.0.1", a.getPort())) {
      s.setSoTimeout(10_000);
      write(s, "CONNECT " + "a".repeat(RequestLineCheck.MAX_LINE + 10));
      assertThat(readToEof(s.getInputStream())).isEqualTo(errorResponse(400, "Bad Request",
          "request line longer than " + RequestLineCheck.MAX_LINE + " bytes"));
    }
    assertThat(fx.metric("konnectivity_network_proxy_server_pending_backend_dials")).isZero();
  }

  @Test
  void http10ConnectIsServed() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    try (Socket bareLf = new Socket("127.0.0.1", ((InetSocketAddress) fx.server.frontendAddress()).getPort())) {
      bareLf.setSoTimeout(10_000);
      write(bareLf, "CONNECT 10.0.0.5:443 HTTP/1.1\n\n");
      assertThat(readToEof(bareLf.getInputStream()))
          .isEqualTo(errorResponse(400, "Bad Request", "request line not ended by CRLF"));
    }
    Socket s = connect();
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.0\r\n\r\n");
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    assertThat(req.getDialRequest().getAddress()).isEqualTo("10.0.0.5:443");
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), 8));
    assertThat(readExactly(s.getInputStream(), ESTABLISHED.length())).isEqualTo(ESTABLISHED);
  }

  @Test
  void noAgentGets500() throws Exception {
    start(b -> b, null);
    Socket s = connect();
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n");
    assertThat(readToEof(s.getInputStream())).isEqualTo(
        errorResponse(500, "Internal Server Error", "currently no tunnels available: No agent available"));
  }

  private void assertDialErrorStatus(String error, int status, String reason) throws Exception {
    TestStream agent = fx.agent("agent-" + status, null);
    try (Socket s = new Socket("127.0.0.1", ((InetSocketAddress) fx.server.frontendAddress()).getPort())) {
      s.setSoTimeout(10_000);
      write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n");
      Packet req = agent.nextPacket(PacketType.DIAL_REQ);
      agent.send(Packets.dialRspError(req.getDialRequest().getRandom(), error));
      assertThat(readToEof(s.getInputStream())).isEqualTo(errorResponse(status, reason, error));
    }
    agent.cancel();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.router().backends().all().isEmpty());
  }

  @Test
  void dialErrorsMapTo502503504() throws Exception {
    start(b -> b, null);
    assertDialErrorStatus("dial tcp 10.0.0.5:443: connect: connection refused", 502, "Bad Gateway");
    assertDialErrorStatus("dial tcp 10.0.0.5:443: i/o timeout", 504, "Gateway Timeout");
    assertDialErrorStatus("context deadline exceeded", 504, "Gateway Timeout");
    assertDialErrorStatus("dial tcp: socket: too many open files", 503, "Service Unavailable");
  }

  @Test
  void backendDialTimeoutGets504AndDialClose() throws Exception {
    FakeClock clock = new FakeClock();
    start(b -> b.backendDialTimeout(Duration.ofSeconds(5)), clock);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n");
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.router().pending().size() == 1);
    clock.advance(Duration.ofSeconds(5));
    assertThat(agent.nextPacket(PacketType.DIAL_CLS).getCloseDial().getRandom())
        .isEqualTo(req.getDialRequest().getRandom());
    String response = readToEof(s.getInputStream());
    assertThat(response).startsWith("HTTP/1.1 504 Gateway Timeout\r\n").contains("dial timeout");
  }

  @Test
  void agentLossFailsPendingWith502AndClosesEstablished() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    Socket established = connect();
    connectThrough(agent, established, 1);
    try (Socket pending = new Socket("127.0.0.1", ((InetSocketAddress) fx.server.frontendAddress()).getPort())) {
      pending.setSoTimeout(10_000);
      write(pending, "CONNECT 10.0.0.6:80 HTTP/1.1\r\n\r\n");
      agent.nextPacket(PacketType.DIAL_REQ);
      agent.cancel();
      assertThat(readToEof(pending.getInputStream()))
          .startsWith("HTTP/1.1 502 Bad Gateway\r\n")
          .contains("agent agent-a disconnected before answering the dial");
    }
    assertThat(established.getInputStream().read()).isEqualTo(-1);
    fx.awaitMapsEmpty();
  }

  @Test
  void clientGoneWhilePendingSendsDialClose() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n");
    long random = agent.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom();
    s.close();
    assertThat(agent.nextPacket(PacketType.DIAL_CLS).getCloseDial().getRandom()).isEqualTo(random);
    fx.awaitMapsEmpty();
  }

  @Test
  void agentCloseClosesTheSocket() throws Exception {
    start(b -> b, null);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connect();
    connectThrough(agent, s, 8);
    agent.send(Packets.closeRsp(8));
    assertThat(s.getInputStream().read()).isEqualTo(-1);
    fx.awaitMapsEmpty();
  }

  @Test
  void headerReadTimeoutClosesTheSocket() throws Exception {
    FakeClock clock = new FakeClock();
    start(b -> b.headerReadTimeout(Duration.ofSeconds(60)), clock);
    Socket s = connect();
    write(s, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n");
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 1);
    clock.advance(Duration.ofSeconds(59));
    assertThat(clock.pendingTasks()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(1));
    assertThat(s.getInputStream().read()).isEqualTo(-1);
  }

  @Test
  void unixDomainSocketFrontendReplacesAnExistingFile() throws Exception {
    Path uds = tmp.resolve("konnectivity.sock");
    Files.writeString(uds, "stale");
    start(b -> b.serverPort(0).udsName(uds).deleteExistingUdsFile(true), null);
    TestStream agent = fx.agent("agent-a", null);
    try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(uds))) {
      ch.write(ByteBuffer.wrap("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
      Packet req = agent.nextPacket(PacketType.DIAL_REQ);
      agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), 2));
      InputStream in = Channels.newInputStream(ch);
      assertThat(readExactly(in, ESTABLISHED.length())).isEqualTo(ESTABLISHED);
      agent.send(Packets.data(2, "hi".getBytes(StandardCharsets.UTF_8)));
      assertThat(readExactly(in, 2)).isEqualTo("hi");
    }
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(2);
  }

  @Test
  void existingUnixSocketFileIsAnErrorWithoutDelete() throws Exception {
    Path uds = tmp.resolve("konnectivity.sock");
    Files.writeString(uds, "stale");
    TunnelServerConfig config = TunnelServerConfig.builder().ephemeralPorts().mode(FrontendMode.HTTP_CONNECT)
        .udsName(uds).deleteExistingUdsFile(false).build();
    try (TunnelServer server = TunnelServer.builder(config).build()) {
      org.assertj.core.api.Assertions.assertThatThrownBy(server::start)
          .hasMessageContaining("tunnel server failed to start")
          .hasRootCauseMessage("unix socket " + uds + " exists (use --delete-existing-uds-file to replace it)");
    }
    assertThat(Arrays.asList(Files.readString(uds))).containsExactly("stale");
  }
}
