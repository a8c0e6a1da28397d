package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.tunnel.wire.Metadata;
import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AgentConnectIntegrationTest {
  private final ServerFixture fx = new ServerFixture(b -> b.serverCount(3));

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void serverHeadersArriveBeforeAnyPacketAndAgentIsRegistered() {
    TestStream agent = fx.track(TestStream.agent(fx.agentChannel(), "agent-a", null));
    io.grpc.Metadata headers = agent.awaitHeaders();
    assertThat(headers.getAll(Metadata.SERVER_ID)).containsExactly("server-1");
    assertThat(headers.getAll(Metadata.SERVER_COUNT)).containsExactly("3");
    await().atMost(Duration.ofSeconds(10)).until(fx.server::ready);
    assertThat(fx.metric("konnectivity_network_proxy_server_grpc_connections", "service_method", "Connect"))
        .isEqualTo(1);
    assertThat(fx.metric("konnectivity_network_proxy_server_ready_backends", "proxy_strategy", "default"))
        .isEqualTo(1);
  }

  @Test
  void agentWithoutAgentIdIsRejected() {
    TestStream agent = fx.track(TestStream.agent(fx.agentChannel(), new io.grpc.Metadata()));
    Status s = agent.awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("expected exactly one agentid header, got 0");
    assertThat(fx.server.ready()).isFalse();
  }

  @Test
  void agentWithTwoAgentIdsIsRejected() {
    io.grpc.Metadata md = new io.grpc.Metadata();
    md.put(Metadata.AGENT_ID, "a");
    md.put(Metadata.AGENT_ID, "b");
    Status s = fx.track(TestStream.agent(fx.agentChannel(), md)).awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("expected exactly one agentid header, got 2");
  }

  @Test
  void malformedIdentifiersAreRejected() {
    Status s = fx.track(TestStream.agent(fx.agentChannel(), "a", "host=%zz")).awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).contains("agentidentifiers: malformed escape");
  }

  @Test
  void agentStreamEndRemovesBackend() {
    TestStream agent = fx.agent("agent-a", "host=node1&default-route=true");
    assertThat(fx.metric("konnectivity_network_proxy_server_ready_backends", "proxy_strategy", "destHost")).isEqualTo(1);
    assertThat(fx.metric("konnectivity_network_proxy_server_ready_backends", "proxy_strategy", "defaultRoute")).isEqualTo(1);
    agent.halfClose();
    assertThat(agent.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    await().atMost(Duration.ofSeconds(10)).until(() -> !fx.server.ready());
    assertThat(fx.server.router().backends().all()).isEmpty();
    assertThat(fx.metric("konnectivity_network_proxy_server_grpc_connections", "service_method", "Connect")).isZero();
  }
}
