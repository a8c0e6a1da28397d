package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.admin.DashboardJson;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tunnel server's {@code /dashboard/state} as real agent and frontend streams come and go. */
class DashboardStateIntegrationTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
    http.close();
  }

  private DashboardJson state() throws Exception {
    return DashboardJson.fetch(fx.server.adminAddress());
  }

  private DashboardJson awaitState(Predicate<DashboardJson> condition) {
    return DashboardJson.awaitState(fx.server.adminAddress(), condition);
  }

  @Test
  void showsAgentsPendingAndEstablishedConnectionsBytesAndDraining() throws Exception {
    fx = new ServerFixture(b -> b.adminPort(0));
    DashboardJson empty = state();
    assertThat(empty.component()).isEqualTo("tunnel-server");
    assertThat(empty.titles()).containsExactly("Server", "Agents", "Readiness");
    assertThat(empty.fields("Server"))
        .containsEntry("server id", "server-1")
        .containsEntry("ready", false)
        .containsEntry("agent streams", 0L)
        .containsEntry("established connections", 0L);
    assertThat(empty.rows("Agents")).isEmpty();
    assertThat(empty.rows("Readiness")).containsExactly(
        Map.of("check", "proxy-agents", "ok", false, "reason", TunnelServer.NOT_READY));

    TestStream agent = fx.agent("agent-a", "host=node1&default-route=true");
    TestStream frontend = fx.frontend();
    frontend.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    DashboardJson pending = state();
    assertThat(pending.fields("Server"))
        .containsEntry("ready", true)
        .containsEntry("agent streams", 1L)
        .containsEntry("pending dials", 1L);
    assertThat(pending.rows("Agents")).containsExactly(Map.of(
        "agent", "agent-a", "identifiers", List.of("host=node1", "default-route"), "draining", false,
        "established", 0L, "pending dials", 1L, "bytes to agent", 0L, "bytes from agent", 0L));

    agent.send(Packets.dialRsp(1, 7));
    frontend.nextPacket(PacketType.DIAL_RSP);
    frontend.send(Packets.data(7, new byte[5]));
    agent.nextPacket(PacketType.DATA);
    agent.send(Packets.data(7, new byte[11]));
    frontend.nextPacket(PacketType.DATA);
    DashboardJson open = state();
    assertThat(open.fields("Server"))
        .containsEntry("established connections", 1L)
        .containsEntry("pending dials", 0L)
        .containsEntry("bytes to agents", 5L)
        .containsEntry("bytes from agents", 11L);
    assertThat(open.rows("Agents").get(0))
        .containsEntry("established", 1L)
        .containsEntry("pending dials", 0L)
        .containsEntry("bytes to agent", 5L)
        .containsEntry("bytes from agent", 11L);

    agent.send(Packets.drain());
    awaitState(s -> Boolean.TRUE.equals(s.rows("Agents").get(0).get("draining")));

    frontend.send(Packets.closeReq(7));
    agent.nextPacket(PacketType.CLOSE_REQ);
    agent.send(Packets.closeRsp(7));
    DashboardJson closed = awaitState(s -> Long.valueOf(0).equals(s.fields("Server").get("established connections")));
    assertThat(closed.rows("Agents").get(0)).containsEntry("established", 0L);
  }

  @Test
  void anAgentThatDisconnectsLeavesTheTable() throws Exception {
    fx = new ServerFixture(b -> b.adminPort(0));
    TestStream a = fx.agent("agent-a", null);
    fx.agent("agent-b", "ipv4=10.0.0.9");
    assertThat(state().rows("Agents")).extracting(r -> r.get("agent")).containsExactly("agent-a", "agent-b");

    a.cancel();

    DashboardJson after = awaitState(s -> s.rows("Agents").size() == 1);
    assertThat(after.rows("Agents").get(0))
        .containsEntry("agent", "agent-b")
        .containsEntry("identifiers", List.of("ipv4=10.0.0.9"));
    assertThat(after.fields("Server")).containsEntry("agent streams", 1L);
  }
}
