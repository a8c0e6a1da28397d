package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.admin.DashboardJson;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.agent.TestProxyServer.AgentStream;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.Socket;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The agent's {@code /dashboard/state} against a test proxy server and a real backend socket. */
class DashboardStateIntegrationTest {
  private final FakeClock clock = new FakeClock();
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

  private DashboardJson state() throws Exception {
    return DashboardJson.fetch(agent.adminAddress());
  }

  @Test
  void showsServersConnectedVersusExpectedAndTheirBackendConnections() throws Exception {
    // Every connection lands on server "s1", which says there are 2: one of two stays connected.
    server = new TestProxyServer(() -> "s1", 2);
    try (TestBackend backend = TestBackend.manual()) {
      agent = new TunnelAgent(TunnelAgentConfig.builder()
          .proxyServerHost("127.0.0.1")
          .proxyServerPort(server.port())
          .agentId("agent-7")
          .agentIdentifiers("host=node1")
          .healthServerPort(-1)
          .adminServerPort(0)
          .build(), clock.timeSource(), new PrometheusRegistry()).start();
      // The sync loop runs on the fake clock: advance it until the first connection is up.
      await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
        clock.advance(Duration.ofMillis(250));
        return agent.connectedServers() == 1;
      });
      AgentStream s = server.nextStream();

      DashboardJson connected = state();
      assertThat(connected.component()).isEqualTo("tunnel-agent");
      assertThat(connected.titles()).containsExactly("Agent", "Servers", "Readiness");
      assertThat(connected.fields("Agent"))
          .containsEntry("agent id", "agent-7")
          .containsEntry("proxy server", "127.0.0.1:" + server.port())
          .containsEntry("identifiers", "host=node1")
          .containsEntry("servers connected", 1L)
          .containsEntry("servers expected", 2L)
          .containsEntry("draining", false)
          .containsEntry("backend connections", 0L);
      assertThat(connected.rows("Servers")).containsExactly(Map.of("server", "s1", "ready", true,
          "server count", 2L, "backend connections", 0L, "pending dials", 0L));

      s.send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
          .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(backend.address()).setRandom(1))
          .build());
      s.next(PacketType.DIAL_RSP);
      try (Socket socket = backend.nextSocket()) {
        DashboardJson open = state();
        assertThat(open.fields("Agent")).containsEntry("backend connections", 1L);
        assertThat(open.rows("Servers").get(0)).containsEntry("backend connections", 1L);

        agent.drain();
        assertThat(state().fields("Agent")).containsEntry("draining", true);
      }

      server.close();
      await().atMost(Duration.ofSeconds(10)).until(() -> state().rows("Servers").isEmpty());
      assertThat(state().fields("Agent")).containsEntry("servers connected", 0L);
      assertThat(state().rows("Readiness").get(0)).containsEntry("ok", false);
    }
  }
}
