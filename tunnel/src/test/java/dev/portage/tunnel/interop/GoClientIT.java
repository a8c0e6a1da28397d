package dev.portage.tunnel.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grpc-go konnectivity client (e2e/konnectivity-go, one ProxyService.Proxy stream per dial like
 * kube-apiserver's) through a Portage server in gRPC mode and a Portage agent: DIAL_REQ/DIAL_RSP,
 * DATA, CLOSE_REQ/CLOSE_RSP, remote EOF, dial errors, no agent, and a client that dies mid-stream.
 */
class GoClientIT {
  private static final int MIB = 1024 * 1024;
  private static final String NEVER = String.valueOf(1L << 40);
  private TunnelServer server;
  private RealTimeAgent agent;
  @TempDir
  Path tmp;

  @BeforeEach
  void startServerAndAgent() throws Exception {
    server = startServer();
    agent = new RealTimeAgent(server.agentPort(), "portage-agent-1", "host=node-a");
    await().atMost(GoPeer.WAIT).until(server::ready);
  }

  private static TunnelServer startServer() {
    return TunnelServer.builder(TunnelServerConfig.builder().ephemeralPorts().healthPort(-1)
            .mode(FrontendMode.GRPC).serverId("portage-interop").build())
        .registry(new PrometheusRegistry()).build().start();
  }

  @AfterEach
  void stop() {
    agent.close();
    server.close();
  }

  private Path file(byte[] content) throws Exception {
    return Files.write(Files.createTempFile(tmp, "in", ".bin"), content);
  }

  private GoPeer client(TunnelServer s, Path stdin, String address, String expectBytes) throws Exception {
    return GoPeer.start(stdin, "client", "-proxy", "127.0.0.1:" + s.serverPort(), "-address", address,
        "-expect-bytes", expectBytes);
  }

  @Test
  void twoMibEchoThroughPortageAndACloseRequestAnsweredByCloseResponse() throws Exception {
    byte[] data = Payload.bytes(11, 2 * MIB);
    try (EchoBackend echo = new EchoBackend();
         GoPeer c = client(server, file(data), echo.address(), String.valueOf(data.length))) {
      assertThat(c.awaitExit()).as("exit code; events %s", c.events()).isZero();

      String dialed = c.awaitEvent("dialed ");
      String closed = c.awaitEvent("close-rsp ");
      assertThat(GoPeer.field(closed, "connectID")).isEqualTo(GoPeer.field(dialed, "connectID"));
      assertThat(GoPeer.field(closed, "error")).isEmpty();
      assertThat(GoPeer.field(closed, "received")).isEqualTo(String.valueOf(data.length));
      assertThat(GoPeer.field(closed, "sha256")).isEqualTo(Payload.sha256(data));
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0 && agent.agent.openEndpointConnections() == 0);
    }
  }

  @Test
  void aRemoteCloseReachesTheGoClientAsCloseResponseAfterTheLastByte() throws Exception {
    byte[] greeting = Payload.bytes(12, MIB);
    try (EchoBackend source = new EchoBackend(greeting, true);
         GoPeer c = client(server, file(new byte[0]), source.address(), NEVER)) {
      assertThat(c.awaitExit()).as("exit code; events %s", c.events()).isZero();

      String closed = c.awaitEvent("close-rsp ");
      assertThat(GoPeer.field(closed, "received")).isEqualTo(String.valueOf(greeting.length));
      assertThat(GoPeer.field(closed, "sha256")).isEqualTo(Payload.sha256(greeting));
    }
  }

  @Test
  void anUnreachableBackendAnswersDialResponseWithAnError() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    try (GoPeer c = client(server, file(new byte[0]), "127.0.0.1:" + closedPort, NEVER)) {
      assertThat(c.awaitExit()).isEqualTo(2);
      String failed = c.awaitEvent("dial-failed ");
      assertThat(GoPeer.field(failed, "connectID")).isEqualTo("0");
      assertThat(GoPeer.field(failed, "error")).containsIgnoringCase("refused");
      assertThat(GoPeer.field(c.awaitEvent("stream-ended "), "error")).as("the server ends the stream, status OK")
          .isEqualTo("EOF");
    }
  }

  @Test
  void withoutAnAgentTheDialFailsAndTheStreamEndsCleanly() throws Exception {
    try (TunnelServer lonely = startServer(); EchoBackend echo = new EchoBackend();
         GoPeer c = client(lonely, file(new byte[0]), echo.address(), NEVER)) {
      assertThat(c.awaitExit()).isEqualTo(2);
      assertThat(GoPeer.field(c.awaitEvent("dial-failed "), "error")).isEqualTo("No agent available");
      assertThat(GoPeer.field(c.awaitEvent("stream-ended "), "error")).as("status OK, not an error").isEqualTo("EOF");
      assertThat(echo.acceptedConnections()).isZero();
    }
  }

  @Test
  void aGoClientThatDiesMidStreamClosesTheBackendConnection() throws Exception {
    try (EchoBackend echo = new EchoBackend(); GoPeer c = client(server, null, echo.address(), NEVER)) {
      c.awaitEvent("dialed ");
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 1);

      c.kill();
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0 && agent.agent.openEndpointConnections() == 0);
    }
  }

  @Test
  void aCancelledStreamOnALiveConnectionClosesTheBackendConnection() throws Exception {
    try (EchoBackend echo = new EchoBackend();
         GoPeer c = GoPeer.start("client", "-proxy", "127.0.0.1:" + server.serverPort(), "-address", echo.address(),
             "-cancel-after-dial")) {
      c.awaitEvent("dialed ");
      assertThat(c.awaitEvent("cancelled ")).contains("Canceled");

      await().atMost(GoPeer.WAIT).until(() -> echo.acceptedConnections() == 1 && echo.openConnections() == 0
          && agent.agent.openEndpointConnections() == 0);
      assertThat(c.alive()).as("only the stream was cancelled, the process and its connection live on").isTrue();
    }
  }

  @Test
  void aDialCloseWhilePendingLeavesTheServerServing() throws Exception {
    try (EchoBackend echo = new EchoBackend()) {
      try (GoPeer cancelled = GoPeer.start("client", "-proxy", "127.0.0.1:" + server.serverPort(),
          "-address", echo.address(), "-dial-cls")) {
        assertThat(cancelled.awaitExit()).isZero();
        cancelled.awaitEvent("dial-cls-sent ");
      }
      byte[] data = Payload.bytes(13, 64 * 1024);
      try (GoPeer c = client(server, file(data), echo.address(), String.valueOf(data.length))) {
        assertThat(c.awaitExit()).as("events %s", c.events()).isZero();
        assertThat(GoPeer.field(c.awaitEvent("close-rsp "), "sha256")).isEqualTo(Payload.sha256(data));
      }
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0 && agent.agent.openEndpointConnections() == 0);
    }
  }
}
