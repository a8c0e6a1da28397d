package dev.portage.tunnel.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.TestPki;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Portage agent serves the grpc-go proxy server (e2e/konnectivity-go, upstream-like: HTTP-CONNECT
 * frontend, no Portage flow control): metadata, dials, DATA both ways, closes from either side, dial
 * errors, DRAIN, and the server going away.
 */
class PortageAgentIT {
  private static final int MIB = 1024 * 1024;
  private GoPeer server;
  private RealTimeAgent agent;
  private int proxyPort;

  @BeforeEach
  void startGoServerAndAgent() throws Exception {
    server = GoPeer.start("server", "-server-id", "go-server-1", "-server-count", "1");
    String listening = server.awaitEvent("listening ");
    proxyPort = Integer.parseInt(GoPeer.field(listening, "proxy-port"));
    agent = new RealTimeAgent(Integer.parseInt(GoPeer.field(listening, "agent-port")), "portage-agent-1",
        "host=node-a&ipv4=127.0.0.1");
    await().atMost(GoPeer.WAIT).until(() -> agent.agent.connectedServers() == 1);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      assertThat(server.events()).as("packets the Go server did not expect (Portage-only packets must never reach it)")
          .noneMatch(l -> l.startsWith("unexpected-packet"));
    } finally {
      agent.close();
      server.close();
    }
  }

  @Test
  void thePortageAgentSendsItsIdAndIdentifiersAsSingleLowercaseHeaders() {
    String connected = server.awaitEvent("agent-connected ");
    assertThat(GoPeer.field(connected, "agentid")).isEqualTo("portage-agent-1");
    assertThat(GoPeer.field(connected, "identifiers")).isEqualTo("host=node-a&ipv4=127.0.0.1");
    assertThat(GoPeer.field(connected, "metadata").split(",")).contains("agentid=1", "agentidentifiers=1");
  }

  @Test
  void curlFetchesFourMibThroughTheGoServerAndThePortageAgent(@TempDir Path tmp) throws Exception {
    try (BlobHttpServer http = new BlobHttpServer(4 * MIB)) {
      Path out = tmp.resolve("blob");
      Curl.fetch(proxyPort, http.url(), out);

      assertThat(Payload.sha256(Files.readAllBytes(out))).isEqualTo(Payload.sha256(http.body));
      server.awaitEvent("connect-established ");
      await().atMost(GoPeer.WAIT).until(() -> agent.agent.openEndpointConnections() == 0);
    }
  }

  @Test
  void bytesEchoBothWaysAndAClientCloseIsAnsweredWithCloseResponse() throws Exception {
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(proxyPort, echo.address())) {
      assertThat(c.head).isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
      byte[] data = Payload.bytes(21, 3 * MIB);
      assertThat(Payload.sha256(c.echo(data))).isEqualTo(Payload.sha256(data));

      c.socket.shutdownOutput(); // client EOF: the Go server sends CLOSE_REQ
      assertThat(c.in().read()).as("socket closed on the agent's CLOSE_RSP").isEqualTo(-1);
      String id = GoPeer.field(server.awaitEvent("connect-established "), "connectID");
      String closed = server.awaitEvent("close-rsp ");
      assertThat(closed).isEqualTo("close-rsp connectID=" + id + " error=\"\" known=true");
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0 && agent.agent.openEndpointConnections() == 0);
    }
  }

  @Test
  void aRemoteCloseIsAnUnsolicitedCloseResponse() throws Exception {
    byte[] greeting = "bye".getBytes(StandardCharsets.UTF_8);
    try (EchoBackend backend = new EchoBackend(greeting, true);
         ConnectSocket c = ConnectSocket.open(proxyPort, backend.address())) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 200 Connection Established");
      assertThat(c.in().readNBytes(greeting.length)).isEqualTo(greeting);
      assertThat(c.in().read()).isEqualTo(-1);
      assertThat(server.awaitEvent("close-rsp ")).contains("error=\"\" known=true");
      assertThat(server.events()).noneMatch(l -> l.startsWith("close-req-sent"));
    }
  }

  @Test
  void anUnreachableBackendIsAFailedDialResponse() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    try (ConnectSocket c = ConnectSocket.open(proxyPort, "127.0.0.1:" + closedPort)) {
      assertThat(c.statusLine()).isEqualTo("HTTP/1.1 502 Bad Gateway");
      assertThat(c.readToEnd()).containsIgnoringCase("refused");
    }
    assertThat(agent.agent.openEndpointConnections()).isZero();
  }

  @Test
  void thePortageAgentConnectsToTheGoServerOverMutualTls(@TempDir Path tmp) throws Exception {
    TestPki pki = new TestPki(tmp);
    try (GoPeer tlsServer = GoPeer.start("server", "-server-id", "go-server-tls", "-cluster-cert", pki.serverCert.toString(),
        "-cluster-key", pki.serverKey.toString(), "-cluster-ca-cert", pki.caCert.toString())) {
      String listening = tlsServer.awaitEvent("listening ");
      int tlsProxyPort = Integer.parseInt(GoPeer.field(listening, "proxy-port"));
      TunnelAgentConfig config = RealTimeAgent.builder(Integer.parseInt(GoPeer.field(listening, "agent-port")),
              "portage-agent-tls", "")
          .proxyServerHost("localhost")
          .caCert(pki.caCert)
          .agentCert(pki.clientCert)
          .agentKey(pki.clientKey)
          .build();
      try (RealTimeAgent tlsAgent = new RealTimeAgent(config); EchoBackend echo = new EchoBackend()) {
        assertThat(GoPeer.field(tlsServer.awaitEvent("agent-connected "), "client-cert")).isEqualTo(TestPki.CLIENT_CN);
        await().atMost(GoPeer.WAIT).until(() -> tlsAgent.agent.connectedServers() == 1);
        try (ConnectSocket c = ConnectSocket.open(tlsProxyPort, echo.address())) {
          assertThat(c.echo("over tls".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8)
              .isEqualTo("over tls");
        }
      }
    }
  }

  @Test
  void drainReachesTheGoServer() {
    agent.agent.drain();
    assertThat(server.awaitEvent("agent-draining ")).isEqualTo("agent-draining agentid=portage-agent-1");
  }

  @Test
  void losingTheGoServerClosesTheAgentsBackendConnections() throws Exception {
    try (EchoBackend echo = new EchoBackend(); ConnectSocket c = ConnectSocket.open(proxyPort, echo.address())) {
      assertThat(c.echo("ping".getBytes(StandardCharsets.UTF_8))).asString(StandardCharsets.UTF_8).isEqualTo("ping");

      server.kill();
      await().atMost(GoPeer.WAIT).until(() -> echo.openConnections() == 0
          && agent.agent.openEndpointConnections() == 0 && agent.agent.connectedServers() == 0);
    }
  }
}
