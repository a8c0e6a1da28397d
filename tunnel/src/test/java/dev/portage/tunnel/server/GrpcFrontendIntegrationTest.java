package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.time.FakeClock;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GrpcFrontendIntegrationTest {
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fx.close();
    }
  }

  private ServerFixture fixture() {
    fx = new ServerFixture();
    return fx;
  }

  /** Dials through {@code agent} and answers with {@code connectID}; returns the frontend stream. */
  private TestStream established(TestStream agent, long random, long connectID) {
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", random));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    assertThat(req.getDialRequest().getRandom()).isEqualTo(random);
    assertThat(req.getDialRequest().getAddress()).isEqualTo("10.0.0.5:443");
    agent.send(Packets.dialRsp(random, connectID));
    Packet rsp = f.nextPacket(PacketType.DIAL_RSP);
    assertThat(rsp.getDialResponse().getConnectID()).isEqualTo(connectID);
    assertThat(rsp.getDialResponse().getRandom()).isEqualTo(random);
    assertThat(rsp.getDialResponse().getError()).isEmpty();
    return f;
  }

  @Test
  void dialDataCloseRoundTripKeepsBytesIntact() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = established(agent, 42, 7);

    byte[] up = "GET /success HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    f.send(Packets.data(7, up));
    Packet atAgent = agent.nextPacket(PacketType.DATA);
    assertThat(atAgent.getData().getConnectID()).isEqualTo(7);
    assertThat(atAgent.getData().getData().toByteArray()).isEqualTo(up);

    byte[] down = new byte[100_000];
    new java.util.Random(1).nextBytes(down);
    agent.send(Packets.data(7, down));
    assertThat(f.nextPacket(PacketType.DATA).getData().getData().toByteArray()).isEqualTo(down);
    assertThat(fx.server.router().establishedCount()).isEqualTo(1);

    f.send(Packets.closeReq(7));
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(7);
    agent.send(Packets.closeRsp(7));
    assertThat(f.nextPacket(PacketType.CLOSE_RSP).getCloseResponse().getConnectID()).isEqualTo(7);
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitMapsEmpty();
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_duration_seconds")).isEqualTo(1);
    assertThat(fx.metric("konnectivity_network_proxy_server_stream_packets", "segment", "from_agent", "packet_type", "DATA"))
        .isEqualTo(1);
  }

  @Test
  void responseHeadersLeaveWithTheFirstPacketNotAtStreamStart() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 5));
    agent.nextPacket(PacketType.DIAL_REQ);
    // The server has started the stream and forwarded its DIAL_REQ, and has sent nothing back yet.
    assertThat(f.headers()).isNull();
    agent.send(Packets.dialRsp(5, 11));
    f.awaitHeaders(); // before the first packet, as the spec requires
    assertThat(f.nextPacket().getType()).isEqualTo(PacketType.DIAL_RSP);
  }

  @Test
  void noAgentAnswersNoAgentAvailableAndEndsTheStream() {
    fixture();
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 9));
    Packet rsp = f.nextPacket(PacketType.DIAL_RSP);
    assertThat(rsp.getDialResponse().getRandom()).isEqualTo(9);
    assertThat(rsp.getDialResponse().getError()).isEqualTo("No agent available");
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_failure_count", "reason", "no_agent")).isEqualTo(1);
  }

  @Test
  void agentDialErrorIsForwardedAndEndsTheStream() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 3));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRspError(3, "dial tcp 10.0.0.5:443: connect: connection refused"));
    assertThat(f.nextPacket(PacketType.DIAL_RSP).getDialResponse().getError())
        .isEqualTo("dial tcp 10.0.0.5:443: connect: connection refused");
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitMapsEmpty();
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_failure_count", "reason", "error_response")).isEqualTo(1);
  }

  @Test
  void dialResponseWithUnknownRandomMakesTheServerCloseThatConnection() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    agent.send(Packets.dialRsp(999, 5));
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(5);
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_failure_count", "reason", "unrecognized_response"))
        .isEqualTo(1);
  }

  @Test
  void dataBeforeDialGetsBackendNotInitialized() {
    fixture();
    TestStream f = fx.frontend();
    f.send(Packets.data(12, new byte[] {1}));
    Packet rsp = f.nextPacket(PacketType.CLOSE_RSP);
    assertThat(rsp.getCloseResponse().getError()).isEqualTo("backend not initialized");
    assertThat(rsp.getCloseResponse().getConnectID()).isEqualTo(12);
  }

  @Test
  void dataForAnotherConnectIdClosesBothEnds() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = established(agent, 1, 7);
    f.send(Packets.data(8, new byte[] {1}));
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(7);
    Packet rsp = f.nextPacket(PacketType.CLOSE_RSP);
    assertThat(rsp.getCloseResponse().getError()).contains("connectID 8").contains("connectID 7");
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitMapsEmpty();
  }

  @Test
  void dataFromAgentForUnknownConnectIdIsDropped() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = established(agent, 1, 7);
    agent.send(Packets.data(99, new byte[] {9}));
    agent.send(Packets.data(7, new byte[] {7}));
    assertThat(f.nextPacket(PacketType.DATA).getData().getData().byteAt(0)).isEqualTo((byte) 7);
  }

  @Test
  void agentStreamLossFailsPendingDialsAtOnceAndClosesEstablished() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream established = established(agent, 1, 7);
    TestStream pending = fx.frontend();
    pending.send(Packets.dialReq("10.0.0.6:80", 2));
    agent.nextPacket(PacketType.DIAL_REQ);

    agent.cancel();

    Packet closed = established.nextPacket(PacketType.CLOSE_RSP);
    assertThat(closed.getCloseResponse().getConnectID()).isEqualTo(7);
    assertThat(established.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    Packet failed = pending.nextPacket(PacketType.DIAL_RSP);
    assertThat(failed.getDialResponse().getRandom()).isEqualTo(2);
    assertThat(failed.getDialResponse().getError()).startsWith("agent agent-a disconnected before answering the dial");
    assertThat(pending.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitMapsEmpty();
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_failure_count", "reason", "backend_close")).isEqualTo(1);
  }

  @Test
  void pendingDialTimesOutOnTheInjectedClock() throws Exception {
    FakeClock clock = new FakeClock();
    fx = new ServerFixture(b -> b.backendDialTimeout(Duration.ofSeconds(5)), clock.timeSource());
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 77));
    agent.nextPacket(PacketType.DIAL_REQ);
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 1);

    clock.advance(Duration.ofSeconds(4));
    assertThat(fx.server.router().pending().size()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(1));

    assertThat(agent.nextPacket(PacketType.DIAL_CLS).getCloseDial().getRandom()).isEqualTo(77);
    Packet rsp = f.nextPacket(PacketType.DIAL_RSP);
    assertThat(rsp.getDialResponse().getError()).contains("timeout");
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    assertThat(fx.server.router().pending().size()).isZero();
    assertThat(fx.metric("konnectivity_network_proxy_server_dial_failure_count", "reason", "backend_dial_timeout"))
        .isEqualTo(1);

    // A late answer is unknown now: the agent is told to close what it opened.
    agent.send(Packets.dialRsp(77, 4));
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(4);
  }

  @Test
  void dialAnsweredInTimeCancelsTheTimer() throws Exception {
    FakeClock clock = new FakeClock();
    fx = new ServerFixture(b -> b.backendDialTimeout(Duration.ofSeconds(5)), clock.timeSource());
    TestStream agent = fx.agent("agent-a", null);
    established(agent, 5, 1);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void dialCloseFromFrontendDropsThePendingDialWithoutForwarding() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 31));
    agent.nextPacket(PacketType.DIAL_REQ);
    f.send(Packets.dialCls(31));
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.router().pending().size() == 0);
    // The agent's answer now matches nothing, so the server closes the connection it opened.
    agent.send(Packets.dialRsp(31, 6));
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(6);
  }

  @Test
  void frontendStreamDeathSendsDialCloseOrCloseRequest() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream pending = fx.frontend();
    pending.send(Packets.dialReq("10.0.0.5:443", 50));
    agent.nextPacket(PacketType.DIAL_REQ);
    pending.cancel();
    assertThat(agent.nextPacket(PacketType.DIAL_CLS).getCloseDial().getRandom()).isEqualTo(50);

    TestStream established = established(agent, 51, 9);
    established.cancel();
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(9);
    fx.awaitMapsEmpty();
  }

  @Test
  void remoteCloseFromAgentIsForwardedAfterQueuedData() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = established(agent, 1, 3);
    agent.send(Packets.data(3, new byte[] {1, 2, 3}));
    agent.send(Packets.closeRsp(3));
    assertThat(f.nextPacket(PacketType.DATA).getData().getData().size()).isEqualTo(3);
    assertThat(f.nextPacket(PacketType.CLOSE_RSP).getCloseResponse().getConnectID()).isEqualTo(3);
    assertThat(f.awaitClose().getCode()).isEqualTo(Status.Code.OK);
    fx.awaitMapsEmpty();
  }

  @Test
  void drainingAgentGetsNoNewDialsWhileAnotherIsActive() {
    fixture();
    TestStream a = fx.agent("agent-a", null);
    TestStream b = fx.agent("agent-b", null);
    a.send(Packets.drain());
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.server.router().backends().all().stream().anyMatch(Backend::draining));
    for (int i = 1; i <= 10; i++) {
      TestStream f = fx.frontend();
      f.send(Packets.dialReq("10.0.0.5:443", i));
      assertThat(b.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom()).isEqualTo(i);
    }
    assertThat(a.poll(100)).isNull();
    assertThat(fx.metric("konnectivity_network_proxy_server_ready_backends", "proxy_strategy", "default")).isEqualTo(1);
  }

  @Test
  void drainingAgentStillServesWhenItIsTheOnlyOne() {
    fixture();
    TestStream a = fx.agent("agent-a", null);
    a.send(Packets.drain());
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.server.router().backends().all().stream().anyMatch(Backend::draining));
    fx.frontend().send(Packets.dialReq("10.0.0.5:443", 1));
    assertThat(a.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom()).isEqualTo(1);
  }

  @Test
  void destHostPicksTheAgentAnnouncingTheHostThenFallsBack() throws Exception {
    fx = new ServerFixture(b -> b.proxyStrategies(ProxyStrategy.parseList("destHost,default")));
    TestStream node1 = fx.agent("node1", "host=node1.example&ipv4=10.1.0.1");
    TestStream other = fx.agent("other", null);
    for (int i = 1; i <= 5; i++) {
      fx.frontend().send(Packets.dialReq("node1.example:10250", i));
      assertThat(node1.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom()).isEqualTo(i);
      fx.frontend().send(Packets.dialReq("10.1.0.1:10250", 100 + i));
      assertThat(node1.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom()).isEqualTo(100 + i);
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 40 && seen.size() < 2; i++) {
      fx.frontend().send(Packets.dialReq("unknown.example:80", 1000 + i));
      Object first = null;
      while (first == null) {
        if (node1.poll(5) instanceof Packet p && p.getType() == PacketType.DIAL_REQ) {
          first = p;
          seen.add("node1");
        } else if (other.poll(5) instanceof Packet p && p.getType() == PacketType.DIAL_REQ) {
          first = p;
          seen.add("other");
        }
      }
    }
    assertThat(seen).containsExactlyInAnyOrder("node1", "other");
  }

  @Test
  void defaultRouteOnlyPicksDefaultRouteAgents() throws Exception {
    fx = new ServerFixture(b -> b.proxyStrategies(ProxyStrategy.parseList("defaultRoute")));
    TestStream plain = fx.agent("plain", "host=a");
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 1));
    assertThat(f.nextPacket(PacketType.DIAL_RSP).getDialResponse().getError()).isEqualTo("No agent available");
    assertThat(fx.server.ready()).isFalse();

    TestStream gateway = fx.agent("gateway", "default-route=true");
    assertThat(fx.server.ready()).isTrue();
    for (int i = 1; i <= 5; i++) {
      fx.frontend().send(Packets.dialReq("10.0.0.5:443", 10 + i));
      assertThat(gateway.nextPacket(PacketType.DIAL_REQ).getDialRequest().getRandom()).isEqualTo(10 + i);
    }
    assertThat(plain.poll(50)).isNull();
  }

  @Test
  void grpcFrontendOnAUnixDomainSocket(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path uds = dir.resolve("proxy.sock");
    fx = new ServerFixture(b -> b.serverPort(0).udsName(uds));
    TestStream agent = fx.agent("agent-a", null);
    dev.portage.core.net.NettyTransport transport = dev.portage.core.net.NettyTransport.best();
    io.netty.channel.EventLoopGroup group = transport.newEventLoopGroup(1, "uds-client");
    io.grpc.ManagedChannel ch = io.grpc.netty.NettyChannelBuilder.forAddress(transport.domainSocketAddress(uds))
        .channelType(transport.domainSocketChannelType(), transport.domainSocketAddress(uds).getClass())
        .eventLoopGroup(group)
        .usePlaintext()
        .build();
    try (TestStream f = TestStream.frontend(ch)) {
      f.send(Packets.dialReq("10.0.0.5:443", 1));
      agent.nextPacket(PacketType.DIAL_REQ);
      agent.send(Packets.dialRsp(1, 1));
      assertThat(f.nextPacket(PacketType.DIAL_RSP).getDialResponse().getConnectID()).isEqualTo(1);
    } finally {
      ch.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
      group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void thousandOpenCloseCyclesLeaveNoState() {
    fixture();
    TestStream agent = fx.agent("agent-a", null);
    for (int i = 1; i <= 1000; i++) {
      TestStream f = TestStream.frontend(fx.frontendChannel());
      f.send(Packets.dialReq("10.0.0.5:443", i));
      agent.nextPacket(PacketType.DIAL_REQ);
      switch (i % 3) {
        case 0 -> { // normal close
          agent.send(Packets.dialRsp(i, i));
          f.nextPacket(PacketType.DIAL_RSP);
          f.send(Packets.closeReq(i));
          agent.nextPacket(PacketType.CLOSE_REQ);
          agent.send(Packets.closeRsp(i));
          f.awaitClose();
        }
        case 1 -> { // client vanishes while established
          agent.send(Packets.dialRsp(i, i));
          f.nextPacket(PacketType.DIAL_RSP);
          f.cancel();
          agent.nextPacket(PacketType.CLOSE_REQ);
        }
        default -> { // client vanishes while pending
          f.cancel();
          agent.nextPacket(PacketType.DIAL_CLS);
        }
      }
    }
    fx.awaitMapsEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_grpc_connections", "service_method", "Proxy") == 0);
    assertThat(fx.metric("konnectivity_network_proxy_server_established_connections")).isZero();
    assertThat(fx.metric("konnectivity_network_proxy_server_pending_backend_dials")).isZero();
  }
}
