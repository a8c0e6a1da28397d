package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.WindowUpdate;
import dev.portage.tunnel.wire.Metadata;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Portage flow control as the server speaks it on the wire, with a test agent stream that offers it:
 * negotiation headers, credit granted back as the client reads, credit that pauses and resumes the
 * client's socket, and bad credit.
 */
class NegotiatedFlowControlIntegrationTest {
  private static final int CHUNK = 32 * 1024;
  private static final int SERVER_WINDOW = 64 * 1024;
  private static final int AGENT_WINDOW = 128 * 1024;
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  private TestStream flowControlAgent(String window) {
    io.grpc.Metadata h = new io.grpc.Metadata();
    h.put(Metadata.AGENT_ID, "agent-a");
    h.put(Metadata.FLOW_CONTROL, Metadata.FLOW_CONTROL_V1);
    h.put(Metadata.FLOW_CONTROL_WINDOW, window);
    TestStream s = fx.track(TestStream.agent(fx.agentChannel(), h));
    io.grpc.Metadata rsp = s.awaitHeaders();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.ready());
    if (!window.equals(Long.toString(AGENT_WINDOW))) {
      assertThat(rsp.get(Metadata.FLOW_CONTROL)).as("a bad offer falls back").isNull();
      return s;
    }
    assertThat(rsp.get(Metadata.FLOW_CONTROL)).isEqualTo("1");
    assertThat(rsp.get(Metadata.FLOW_CONTROL_WINDOW)).isEqualTo(Integer.toString(SERVER_WINDOW));
    return s;
  }

  private Socket tunnel(TestStream agent, long connectID) throws Exception {
    Socket s = new Socket("127.0.0.1", ((InetSocketAddress) fx.server.frontendAddress()).getPort());
    s.setSoTimeout(10_000);
    s.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    assertThat(new String(s.getInputStream().readNBytes(39), StandardCharsets.US_ASCII))
        .isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
    return s;
  }

  private static Packet windowUpdate(long connectID, long bytes) {
    return Packet.newBuilder()
        .setType(PacketType.PORTAGE_WINDOW_UPDATE)
        .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(connectID).setBytes(bytes))
        .build();
  }

  /**
   * Receives DATA until the agent got as many as the server counts as sent (it is paused: that count
   * no longer moves); returns their bytes.
   */
  private long receiveEverythingSent(TestStream agent) {
    double sent = fx.metric(
        "konnectivity_network_proxy_server_stream_packets", "segment", "to_agent", "packet_type", "DATA");
    long bytes = 0;
    for (int i = 0; i < sent; i++) {
      bytes += agent.nextPacket(PacketType.DATA).getData().getData().size();
    }
    return bytes;
  }

  private static ByteString chunk(int seed) {
    byte[] b = new byte[CHUNK];
    new Random(seed).nextBytes(b);
    return ByteString.copyFrom(b);
  }

  @Test
  void upstreamAgentsAreNotOfferedFlowControl() {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT));
    TestStream plain = fx.track(TestStream.agent(fx.agentChannel(), "agent-a", null));
    io.grpc.Metadata rsp = plain.awaitHeaders();
    assertThat(rsp.get(Metadata.FLOW_CONTROL)).isNull();
    assertThat(rsp.get(Metadata.FLOW_CONTROL_WINDOW)).isNull();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.ready());
    assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_streams")).isZero();
  }

  @Test
  void anOfferWithABadWindowGetsTheOverflowRule() {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT).flowControlWindow(SERVER_WINDOW));
    flowControlAgent("-1");
    assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_streams")).isZero();
  }

  @Test
  void creditIsGrantedAsTheClientReadsAndClientReadsPauseWithoutCredit() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT).flowControlWindow(SERVER_WINDOW));
    TestStream agent = flowControlAgent(Long.toString(AGENT_WINDOW));
    assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_streams")).isEqualTo(1);
    try (Socket client = tunnel(agent, 1)) {
      // Toward the client: the server grants what it wrote, in batches of at least half its window.
      for (int i = 0; i < 4; i++) {
        agent.send(Packets.data(1, chunk(i)));
      }
      InputStream in = client.getInputStream();
      for (int i = 0; i < 4; i++) {
        assertThat(ByteString.copyFrom(in.readNBytes(CHUNK))).isEqualTo(chunk(i));
      }
      long granted = 0;
      while (granted < 4 * CHUNK) {
        Packet p = agent.nextPacket(PacketType.PORTAGE_WINDOW_UPDATE);
        assertThat(p.getWindowUpdate().getConnectID()).isEqualTo(1);
        assertThat(p.getWindowUpdate().getBytes()).isGreaterThanOrEqualTo(SERVER_WINDOW / 2);
        granted += p.getWindowUpdate().getBytes();
      }
      assertThat(granted).isEqualTo(4 * CHUNK);

      // Toward the agent: the client's socket is read until the agent's window is used up, then paused.
      byte[] upload = new byte[AGENT_WINDOW + 2 * CHUNK]; // after one pause less than a window is left
      new Random(7).nextBytes(upload);
      client.getOutputStream().write(upload);
      await().atMost(Duration.ofSeconds(10)).until(() -> fx.metric(
          "konnectivity_network_proxy_server_flow_control_paused_connections", "service_method", "HTTP-CONNECT") == 1);
      long forwarded = receiveEverythingSent(agent);
      assertThat(forwarded).as("paused at the window, one socket read (at most MAX_CHUNK) at most beyond it")
          .isBetween((long) AGENT_WINDOW, (long) AGENT_WINDOW + HttpConnectServer.MAX_CHUNK);
      agent.send(windowUpdate(1, forwarded));
      while (forwarded < upload.length) {
        forwarded += agent.nextPacket(PacketType.DATA).getData().getData().size();
      }
      assertThat(forwarded).isEqualTo(upload.length);
      assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_pauses", "service_method", "HTTP-CONNECT"))
          .isEqualTo(1);
    }
    assertThat(fx.metric("konnectivity_network_proxy_server_receive_queue_overflows", "service_method", "HTTP-CONNECT"))
        .isZero();
  }

  @Test
  void creditForAnUnknownConnectIdIsIgnoredAndMalformedCreditClosesOnlyItsConnection() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT).flowControlWindow(SERVER_WINDOW));
    TestStream agent = flowControlAgent(Long.toString(AGENT_WINDOW));
    try (Socket bad = tunnel(agent, 1); Socket good = tunnel(agent, 2)) {
      agent.send(windowUpdate(99, 1024)); // unknown: ignored (DEBUG log), nothing else happens
      agent.send(windowUpdate(1, 0)); // malformed: closes connection 1 alone
      assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(1);
      assertThat(bad.getInputStream().read()).as("the malformed connection's client sees EOF").isEqualTo(-1);
      assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_errors")).isEqualTo(1);

      // Credit beyond what was ever sent is malformed too; the other connection keeps flowing.
      agent.send(Packets.data(2, chunk(5)));
      assertThat(ByteString.copyFrom(good.getInputStream().readNBytes(CHUNK))).isEqualTo(chunk(5));
      assertThat(agent.nextPacket(PacketType.PORTAGE_WINDOW_UPDATE).getWindowUpdate().getBytes()).isEqualTo(CHUNK);
      good.getOutputStream().write("still flowing".getBytes(StandardCharsets.US_ASCII));
      assertThat(agent.nextPacket(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("still flowing");
      agent.send(windowUpdate(2, AGENT_WINDOW));
      assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(2);
      assertThat(fx.metric("konnectivity_network_proxy_server_flow_control_errors")).isEqualTo(2);
    }
    agent.send(Packets.closeRsp(1));
    agent.send(Packets.closeRsp(2));
    fx.awaitMapsEmpty();
  }

  @Test
  void grpcFrontendStreamHonoursCreditToo() {
    fx = new ServerFixture(b -> b.flowControlWindow(SERVER_WINDOW));
    TestStream agent = flowControlAgent(Long.toString(AGENT_WINDOW));
    TestStream client = fx.frontend();
    client.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(1, 1));
    client.nextPacket(PacketType.DIAL_RSP);

    // 2× the agent's window in client DATA: the server stops requesting packets at the window.
    for (int i = 0; i < 2 * AGENT_WINDOW / CHUNK; i++) {
      client.send(Packets.data(1, chunk(i)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.metric(
        "konnectivity_network_proxy_server_flow_control_paused_connections", "service_method", "Proxy") == 1);
    long forwarded = receiveEverythingSent(agent);
    assertThat(forwarded).as("paused exactly at the window (client packets are 32 KiB)").isEqualTo(AGENT_WINDOW);
    agent.send(windowUpdate(1, AGENT_WINDOW));
    while (forwarded < 2L * AGENT_WINDOW) {
      forwarded += agent.nextPacket(PacketType.DATA).getData().getData().size();
    }

    // Toward the client: DATA sent on the client's stream is granted back.
    for (int i = 0; i < 2; i++) {
      agent.send(Packets.data(1, chunk(100 + i)));
    }
    for (int i = 0; i < 2; i++) {
      assertThat(client.nextPacket(PacketType.DATA).getData().getData()).isEqualTo(chunk(100 + i));
    }
    // The server's window is 64 KiB: each 32 KiB reaches half of it and is granted at once.
    for (int i = 0; i < 2; i++) {
      assertThat(agent.nextPacket(PacketType.PORTAGE_WINDOW_UPDATE).getWindowUpdate().getBytes()).isEqualTo(CHUNK);
    }

    agent.send(windowUpdate(1, -5));
    Packet close = client.nextPacket(PacketType.CLOSE_RSP);
    assertThat(close.getCloseResponse().getError())
        .isEqualTo("flow control violated: agent agent-a connectID 1: window update of -5 bytes (expected: > 0)");
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(1);
  }
}
