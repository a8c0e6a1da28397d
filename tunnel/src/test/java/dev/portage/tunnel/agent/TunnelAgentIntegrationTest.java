package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.agent.TestProxyServer.AgentStream;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The whole agent against test proxy servers: HA sync, probe and resync, drain, health endpoints. */
class TunnelAgentIntegrationTest {
  private final FakeClock clock = new FakeClock();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final HttpClient http = HttpClient.newHttpClient();
  private TestProxyServer server;
  private TunnelAgent agent;

  @AfterEach
  void tearDown() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (server != null) {
      server.close();
    }
    http.close();
  }

  private TunnelAgentConfig.Builder config(int port) {
    return TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(port)
        .agentId("agent-7")
        .healthServerHost("127.0.0.1")
        .healthServerPort(0)
        .adminServerPort(0);
  }

  /** Advances fake time in small steps (running the sync loop) until {@code done} holds. */
  private void driveUntil(BooleanSupplier done) {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (done.getAsBoolean()) {
        return true;
      }
      clock.advance(Duration.ofMillis(250));
      return done.getAsBoolean();
    });
  }

  private static Iterator<String> ids(String... ids) {
    AtomicInteger extra = new AtomicInteger();
    Iterator<String> listed = List.of(ids).iterator();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return true;
      }

      @Override
      public synchronized String next() {
        return listed.hasNext() ? listed.next() : "extra-" + extra.incrementAndGet();
      }
    };
  }

  private HttpResponse<String> get(String path) throws Exception {
    return get(agent.healthAddress(), path);
  }

  private HttpResponse<String> get(java.net.InetSocketAddress listener, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + listener.getPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void keepsExactlyOneConnectionPerServerIdUntilServerCountIsReached() throws Exception {
    Iterator<String> ids = ids("s1", "s1", "s2", "s1", "s3");
    server = new TestProxyServer(ids::next, 3);
    agent = new TunnelAgent(config(server.port()).build(), clock.timeSource(), registry).start();

    driveUntil(() -> agent.connectedServers() == 3);

    assertThat(agent.clientSet().connections()).extracting(ServerConnection::serverId)
        .containsExactlyInAnyOrder("s1", "s2", "s3");
    List<AgentStream> streams = server.streams();
    assertThat(streams).hasSize(5);
    // The two duplicates (second "s1" and third "s1") were closed by the agent.
    await().atMost(Duration.ofSeconds(10)).until(() -> streams.get(1).hasEnded() && streams.get(3).hasEnded());
    assertThat(streams.get(0).hasEnded()).isFalse();
    assertThat(streams.get(2).hasEnded()).isFalse();
    assertThat(streams.get(4).hasEnded()).isFalse();

    // N reached: time passes, no more connects.
    clock.advance(Duration.ofSeconds(30));
    assertThat(server.streams()).hasSize(5);
    assertThat(TestMetrics.value(registry, AgentMetrics.PREFIX + "open_server_connections")).isEqualTo(3);
    assertThat(TestMetrics.value(registry, AgentMetrics.PREFIX + "known_server_count")).isEqualTo(3);
  }

  @Test
  void syncForeverKeepsConnectingAfterServerCountIsReached() throws Exception {
    server = new TestProxyServer(ids("s1", "s1", "s2")::next, 1);
    agent = new TunnelAgent(config(server.port()).syncForever(true).build(), clock.timeSource(), registry).start();

    driveUntil(() -> agent.connectedServers() == 2);
    assertThat(server.streams()).hasSizeGreaterThanOrEqualTo(3);
  }

  @Test
  void lostServerIsReconnectedWithBackoff() throws Exception {
    server = new TestProxyServer("s1", 1);
    int port = server.port();
    // A far-away probe leaves the sync attempt as the only timer that matters.
    agent = new TunnelAgent(config(port).probeInterval(Duration.ofHours(1)).build(), clock.timeSource(), registry)
        .start();
    driveUntil(() -> agent.connectedServers() == 1);
    AgentStream first = server.nextStream();

    server.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> agent.connectedServers() == 0);
    clock.advance(nextSyncDelay()); // the settled-state check finds 0 of 1 and connects: refused

    // Failures back off from --sync-interval ×1.5 per attempt with up to 10 % jitter.
    Duration d1 = nextSyncDelay();
    assertThat(d1).isBetween(Duration.ofMillis(1000), Duration.ofMillis(1100));
    clock.advance(d1);
    Duration d2 = nextSyncDelay();
    assertThat(d2).isBetween(Duration.ofMillis(1500), Duration.ofMillis(1650));
    clock.advance(d2);
    Duration d3 = nextSyncDelay();
    assertThat(d3).isBetween(Duration.ofMillis(2250), Duration.ofMillis(2475));

    server = new TestProxyServer(() -> "s1-restarted", 1, port);
    clock.advance(d3);
    await().atMost(Duration.ofSeconds(10)).until(() -> agent.connectedServers() == 1);
    assertThat(agent.clientSet().connections().get(0).serverId()).isEqualTo("s1-restarted");
    assertThat(first.hasEnded()).isTrue();
    // Success resets the backoff: the next check is one sync interval away again.
    assertThat(nextSyncDelay()).isBetween(Duration.ofMillis(1000), Duration.ofMillis(1100));
  }

  /** Waits until the sync loop has scheduled its next attempt (probe + sync pending) and returns its delay. */
  private Duration nextSyncDelay() {
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 2);
    return clock.nextDeadline();
  }

  @Test
  void drainIsSentOnEveryServerStream() throws Exception {
    server = new TestProxyServer(ids("a", "b")::next, 2);
    agent = new TunnelAgent(config(server.port()).build(), clock.timeSource(), registry).start();
    driveUntil(() -> agent.connectedServers() == 2);

    agent.drain();

    for (AgentStream s : server.streams()) {
      assertThat(s.next(PacketType.DRAIN).hasDrain()).isTrue();
    }
  }

  @Test
  void readyzFailsUntilAServerIsConnected() throws Exception {
    server = new TestProxyServer("s1", 1);
    agent = new TunnelAgent(config(server.port()).build(), clock.timeSource(), registry).start();

    for (String path : List.of("/readyz", "/ready")) {
      HttpResponse<String> notReady = get(path);
      assertThat(notReady.statusCode()).as(path).isEqualTo(503);
      assertThat(notReady.body()).contains("[-]server-connected failed: no servers connected");
    }
    assertThat(get("/healthz").statusCode()).isEqualTo(200);

    driveUntil(() -> agent.connectedServers() == 1);

    for (String path : List.of("/readyz", "/ready")) {
      assertThat(get(path).statusCode()).as(path).isEqualTo(200);
      assertThat(get(agent.adminAddress(), path).statusCode()).as("admin " + path).isEqualTo(200);
    }
    assertThat(get("/readyz?verbose").body()).contains("[+]server-connected ok");
    // The health port answers health questions only; metrics and the dashboard are on the admin port.
    assertThat(get("/metrics").statusCode()).isEqualTo(404);
    assertThat(get("/dashboard").statusCode()).isEqualTo(404);
    String metrics = get(agent.adminAddress(), "/metrics").body();
    assertThat(metrics).contains(
        "konnectivity_network_proxy_agent_open_server_connections 1",
        "konnectivity_network_proxy_agent_known_server_count 1",
        "konnectivity_network_proxy_agent_dial_duration_seconds",
        "konnectivity_network_proxy_agent_open_endpoint_connections");

    HttpResponse<String> status = http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + agent.adminAddress().getPort() + "/status")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(status.body()).contains("agent agent-7", "server s1 ready=true endpoints=0");
  }

  @Test
  void closingTheAgentClosesServerStreamsAndBackendSockets() throws Exception {
    server = new TestProxyServer("s1", 1);
    try (TestBackend backend = TestBackend.manual()) {
      agent = new TunnelAgent(config(server.port()).build(), clock.timeSource(), registry).start();
      driveUntil(() -> agent.connectedServers() == 1);
      AgentStream s = server.nextStream();
      s.send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
          .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(backend.address()).setRandom(1))
          .build());
      assertThat(s.next(PacketType.DIAL_RSP).getDialResponse().getConnectID()).isEqualTo(1);
      Socket socket = backend.nextSocket();
      socket.setSoTimeout(10_000);
      assertThat(agent.openEndpointConnections()).isEqualTo(1);

      agent.close();

      assertThat(socket.getInputStream().read()).isEqualTo(-1);
      socket.close();
      await().atMost(Duration.ofSeconds(10)).until(s::hasEnded);
      assertThat(agent.connectedServers()).isZero();
      assertThat(agent.openEndpointConnections()).isZero();
    }
  }

  @Test
  void removingAServerConnectionClosesItsBackendSockets() throws Exception {
    server = new TestProxyServer("s1", 1);
    try (TestBackend backend = TestBackend.manual()) {
      agent = new TunnelAgent(config(server.port()).build(), clock.timeSource(), registry).start();
      driveUntil(() -> agent.connectedServers() == 1);
      AgentStream s = server.nextStream();
      for (int i = 1; i <= 3; i++) {
        s.send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
            .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(backend.address()).setRandom(i))
            .build());
        s.next(PacketType.DIAL_RSP);
      }
      List<Socket> sockets = List.of(backend.nextSocket(), backend.nextSocket(), backend.nextSocket());
      s.send(Packet.newBuilder().setType(PacketType.CLOSE_REQ)
          .setCloseRequest(CloseRequest.newBuilder().setConnectID(2)).build());
      s.next(PacketType.CLOSE_RSP);

      s.complete(); // the server ends the stream: the agent drops that server connection

      await().atMost(Duration.ofSeconds(10)).until(() -> agent.connectedServers() == 0);
      assertThat(agent.openEndpointConnections()).isZero();
      for (Socket socket : sockets) {
        socket.setSoTimeout(10_000);
        assertThat(socket.getInputStream().read()).isEqualTo(-1);
        socket.close();
      }
    }
  }
}
