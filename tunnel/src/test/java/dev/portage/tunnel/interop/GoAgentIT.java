package dev.portage.tunnel.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.ProxyStrategy;
import dev.portage.tunnel.server.TestPki;
import dev.portage.tunnel.server.TlsFiles;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grpc-go agent (e2e/konnectivity-go, written from the spec like upstream's proxy-agent) serves a
 * Portage server in HTTP-CONNECT mode: response headers, DIAL_REQ/DIAL_RSP, DATA both ways,
 * CLOSE_REQ/CLOSE_RSP, remote EOF, dial errors, DRAIN and agent stream loss.
 */
class GoAgentIT {
  private static final int MIB = 1024 * 1024;
  private TunnelServer server;
  private GoPeer agent;

  @BeforeEach
  void startServerAndGoAgent() throws Exception {
    server = TunnelServer.builder(TunnelServerConfig.builder().ephemeralPorts().healthPort(-1)
            .mode(FrontendMode.HTTP_CONNECT).serverId("portage-interop").serverCount(1).build())
        .registry(new PrometheusRegistry()).build().start();
    agent = GoPeer.start("agent", "-server", "127.0.0.1:" + server.agentPort(), "-agent-id", "go-agent-1",
        "-agent-identifiers", "host=node-a&ipv4=127.0.0.1");
    String connected = agent.awaitEvent("connected ");
    assertThat(GoPeer.field(connected, "serverid")).isEqualTo("portage-interop");
    assertThat(GoPeer.field(connected, "servercount")).isEqualTo("1");
    await().atMost(GoPeer.WAIT).until(server::ready);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      assertThat(agent.events()).as("packets the Go agent did not expect").noneMatch(l -> l.startsWith("unexpected-packet"));
    } finally {
      agent.close();
      server.close();
    }
  }

  @Test
  void curlFetchesFourMibThroughTheGoAgent(@TempDir Path tmp) throws Exception {
    try (BlobHttpServer http = new BlobHttpServer(4 * MIB)) {
      Path out = tmp.resolve("blob");
      Curl.fetch(server.serverPort(), http.url(), out);

      assertThat(Payload.sha256(Files.readAllBytes(out))).isEqualTo(Payload.sha256(http.body));
      assertThat(agent.awaitEvent("dialed ")).contains("address=" + http.url().substring(7, http.url().indexOf("/blob")));
      // curl's exit closes its socket: CLOSE_REQ reaches the Go agent (or the backend closed first).
      agent.awaitEvent(l -> l.startsWith("closed connectID=1") || l.startsWith("remote-closed connectID=1"), "a close");
    }
  }

  @Test
  void bytesEchoBothWaysAndAClientCloseClosesTheBackend() throws Exception {
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(server.serverPort(), echo.address())) {
      assertThat(c.head).isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
      byte[] data = Payload.bytes(3, 3 * MIB);
      assertThat(Payload.sha256(c.echo(data))).isEqualTo(Payload.sha256(data));

      c.close();
      String closed = agent.awaitEvent("closed connectID=");
      assertThat(GoPeer.field(closed, "connectID")).isEqualTo(GoPeer.field(agent.awaitEvent("dialed "), "connectID"));
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0);
    }
  }

  @Test
  void aRemoteCloseEndsTheClientSocket() throws Exception {
    byte[] greeting = "hello from the backend".getBytes(StandardCharsets.UTF_8);
    try (EchoBackend backend = new EchoBackend(greeting, true);
         ConnectSocket c = ConnectSocket.open(server.serverPort(), backend.address())) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 200 Connection Established");
      assertThat(c.in().readNBytes(greeting.length)).isEqualTo(greeting);
      assertThat(c.in().read()).as("EOF after the Go agent's unsolicited CLOSE_RSP").isEqualTo(-1);
      agent.awaitEvent("remote-closed connectID=");
    }
  }

  @Test
  void anUnreachableBackendIs502WithTheGoAgentsError() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    try (ConnectSocket c = ConnectSocket.open(server.serverPort(), "127.0.0.1:" + closedPort)) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 502 Bad Gateway");
      assertThat(c.readToEnd()).isEqualTo("dial tcp 127.0.0.1:" + closedPort + ": connect: connection refused");
    }
    assertThat(agent.awaitEvent("dial-failed ")).contains("connection refused");
  }

  @Test
  void losingTheGoAgentClosesItsTunnelsAndLaterDialsFindNoAgent() throws Exception {
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(server.serverPort(), echo.address())) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 200 Connection Established");
      assertThat(c.echo("ping".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8).isEqualTo("ping");

      agent.kill();
      assertThat(c.in().read()).as("the client socket is closed when the agent stream is lost").isEqualTo(-1);
      await().atMost(GoPeer.WAIT).until(() -> !server.ready());
      try (ConnectSocket again = ConnectSocket.open(server.serverPort(), echo.address())) {
        assertThat(again.statusLine()).isEqualTo("HTTP/1.1 500 Internal Server Error");
        assertThat(again.readToEnd()).isEqualTo("currently no tunnels available: No agent available");
      }
    }
  }

  /**
   * The slow-reader rule with an upstream-like agent (no Portage flow control, so the fallback
   * applies): a client that does not read must not stall another connection on the same agent
   * stream, and (staying under the 4 MiB overflow limit) later gets every byte.
   */
  @Test
  void aClientThatDoesNotReadDoesNotStallAnotherConnectionOnTheGoAgent() throws Exception {
    byte[] big = Payload.bytes(5, 3 * MIB);
    try (EchoBackend source = new EchoBackend(big, true);
         EchoBackend echo = new EchoBackend();
         ConnectSocket stuck = ConnectSocket.open(server.serverPort(), source.address());
         ConnectSocket other = ConnectSocket.open(server.serverPort(), echo.address())) {
      assertThat(stuck.statusLine()).isEqualTo("HTTP/1.1 200 Connection Established");
      await().atMost(GoPeer.WAIT).until(() -> source.acceptedConnections() == 1);

      byte[] data = Payload.bytes(6, 512 * 1024);
      assertThat(Payload.sha256(other.echo(data))).isEqualTo(Payload.sha256(data));
      assertThat(Payload.sha256(stuck.in().readAllBytes())).as("the late reader gets all of it, then EOF")
          .isEqualTo(Payload.sha256(big));
    }
  }

  @Test
  void stoppingThePortageServerEndsTheGoAgentsStreamAndItClosesItsBackends() throws Exception {
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(server.serverPort(), echo.address())) {
      assertThat(c.echo("ping".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8).isEqualTo("ping");

      server.close();
      // grpc-java's shutdown resets the stream (RST_STREAM CANCEL, "code = Canceled"); a grpc-go
      // server's Stop gives "Unavailable: transport is closing". Upstream's agent reconnects on either.
      assertThat(GoPeer.field(agent.awaitEvent("stream-ended "), "error")).startsWith("rpc error: code = ");
      assertThat(agent.awaitExit()).isEqualTo(1);
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0);
    }
  }

  @Test
  void theGoAgentsIdentifiersDriveTheDestHostStrategy() throws Exception {
    try (TunnelServer byHost = TunnelServer.builder(TunnelServerConfig.builder().ephemeralPorts().healthPort(-1)
            .mode(FrontendMode.HTTP_CONNECT).serverId("portage-dest-host")
            .proxyStrategies(List.of(ProxyStrategy.DEST_HOST)).build())
            .registry(new PrometheusRegistry()).build().start();
         GoPeer hostAgent = GoPeer.start("agent", "-server", "127.0.0.1:" + byHost.agentPort(), "-agent-id", "go-agent-2",
             "-agent-identifiers", "host=localhost&ipv4=127.0.0.1");
         EchoBackend echo = new EchoBackend()) {
      hostAgent.awaitEvent("connected ");
      await().atMost(GoPeer.WAIT).until(byHost::ready);
      int port = Integer.parseInt(echo.address().substring(echo.address().lastIndexOf(':') + 1));

      for (String host : List.of("127.0.0.1", "localhost")) {
        try (ConnectSocket c = ConnectSocket.open(byHost.serverPort(), host + ":" + port)) {
          assertThat(c.statusLine()).as("dial to %s", host).isEqualTo("HTTP/1.1 200 Connection Established");
        }
      }
      try (ConnectSocket c = ConnectSocket.open(byHost.serverPort(), "127.0.0.2:" + port)) {
        assertThat(c.statusLine()).as("no agent announced 127.0.0.2").isEqualTo("HTTP/1.1 500 Internal Server Error");
      }
    }
  }

  @Test
  void theGoAgentConnectsOverMutualTls(@TempDir Path tmp) throws Exception {
    TestPki pki = new TestPki(tmp);
    try (TunnelServer tls = TunnelServer.builder(TunnelServerConfig.builder().ephemeralPorts().healthPort(-1)
            .mode(FrontendMode.HTTP_CONNECT).serverId("portage-tls")
            .agentTls(new TlsFiles(pki.serverCert, pki.serverKey, pki.caCert)).build())
            .registry(new PrometheusRegistry()).build().start();
         GoPeer tlsAgent = GoPeer.start("agent", "-server", "127.0.0.1:" + tls.agentPort(), "-agent-id", "go-agent-tls",
             "-ca-cert", pki.caCert.toString(), "-agent-cert", pki.clientCert.toString(),
             "-agent-key", pki.clientKey.toString(), "-server-name", "localhost");
         GoPeer noCert = GoPeer.start("agent", "-server", "127.0.0.1:" + tls.agentPort(), "-agent-id", "go-agent-anon",
             "-ca-cert", pki.caCert.toString(), "-server-name", "localhost");
         EchoBackend echo = new EchoBackend()) {
      assertThat(GoPeer.field(tlsAgent.awaitEvent("connected "), "serverid")).isEqualTo("portage-tls");
      await().atMost(GoPeer.WAIT).until(tls::ready);
      try (ConnectSocket c = ConnectSocket.open(tls.serverPort(), echo.address())) {
        assertThat(c.echo("over tls".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8).isEqualTo("over tls");
      }
      assertThat(GoPeer.field(noCert.awaitEvent("connect-failed "), "error")).as("no client certificate: refused")
          .contains("code = Unavailable");
      assertThat(noCert.awaitExit()).isEqualTo(1);
    }
  }

  @Test
  void aGoAgentWithoutAnAgentIdIsRefused() throws Exception {
    try (GoPeer anonymous = GoPeer.start("agent", "-server", "127.0.0.1:" + server.agentPort(), "-agent-id", "")) {
      assertThat(GoPeer.field(anonymous.awaitEvent("connect-failed "), "error"))
          .contains("code = InvalidArgument").contains("agentid");
      assertThat(anonymous.awaitExit()).isEqualTo(1);
    }
    assertThat(agent.alive()).as("the other agent keeps its stream").isTrue();
  }

  @Test
  void aDrainingGoAgentKeepsItsStreamAndStillServesAsTheOnlyAgent() throws Exception {
    agent.tell("drain"); // what its first SIGTERM does (the Failsafe JVM may start it with SIGTERM blocked)
    agent.awaitEvent("drain-sent");
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(server.serverPort(), echo.address())) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 200 Connection Established");
      assertThat(c.echo("after drain".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8)
          .isEqualTo("after drain");
    }
    assertThat(agent.alive()).isTrue();
  }
}
