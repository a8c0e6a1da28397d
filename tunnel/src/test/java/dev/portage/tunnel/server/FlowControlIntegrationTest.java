package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Per-connection queues: a slow client never stalls other connections on the same agent stream. */
class FlowControlIntegrationTest {
  private static final int CHUNK = 32 * 1024;
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  private static ByteString chunk(int seed) {
    byte[] b = new byte[CHUNK];
    new Random(seed).nextBytes(b);
    return ByteString.copyFrom(b);
  }

  private Socket tunnel(TestStream agent, long connectID) throws Exception {
    Socket s = new Socket("127.0.0.1", ((InetSocketAddress) fx.server.frontendAddress()).getPort());
    s.setSoTimeout(10_000);
    s.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    String established = new String(s.getInputStream().readNBytes(39), StandardCharsets.US_ASCII);
    assertThat(established).isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
    return s;
  }

  @Test
  void slowReaderDoesNotStallOtherConnections() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT));
    TestStream agent = fx.agent("agent-a", null);
    try (Socket slow = tunnel(agent, 1); Socket fast = tunnel(agent, 2)) {
      // 2 MiB for a client that never reads: more than its socket buffers hold, less than its budget.
      for (int i = 0; i < 64; i++) {
        agent.send(Packets.data(1, chunk(i)));
      }
      int chunks = 128; // 4 MiB for the reading client, behind the stuck data on the same agent stream
      for (int i = 0; i < chunks; i++) {
        agent.send(Packets.data(2, chunk(1000 + i)));
      }
      InputStream in = fast.getInputStream();
      for (int i = 0; i < chunks; i++) {
        assertThat(ByteString.copyFrom(in.readNBytes(CHUNK))).isEqualTo(chunk(1000 + i));
      }
      // The agent stream still carries the other direction too.
      fast.getOutputStream().write("still flowing".getBytes(StandardCharsets.US_ASCII));
      assertThat(agent.nextPacket(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("still flowing");
      // The slow connection was held back, not dropped: its bytes are all there once it reads.
      InputStream slowIn = slow.getInputStream();
      for (int i = 0; i < 64; i++) {
        assertThat(ByteString.copyFrom(slowIn.readNBytes(CHUNK))).isEqualTo(chunk(i));
      }
    }
    assertThat(fx.metric("konnectivity_network_proxy_server_receive_queue_overflows", "service_method", "HTTP-CONNECT"))
        .isZero();
  }

  @Test
  void grpcSlowReaderOverflowClosesOnlyItsOwnConnection() throws Exception {
    fx = new ServerFixture(b -> b.connectionQueueBytes(256 * 1024));
    TestStream agent = fx.agent("agent-a", null);
    InetSocketAddress frontendAddress = (InetSocketAddress) fx.server.frontendAddress();
    ManagedChannel slowChannel = fx.channel(frontendAddress);
    ManagedChannel fastChannel = fx.channel(frontendAddress);

    TestStream slow = fx.track(TestStream.frontend(slowChannel, false));
    slow.request(1);
    slow.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(1, 1));
    assertThat(slow.nextPacket(PacketType.DIAL_RSP).getDialResponse().getConnectID()).isEqualTo(1);

    TestStream fast = fx.track(TestStream.frontend(fastChannel));
    fast.send(Packets.dialReq("10.0.0.5:443", 2));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(2, 2));
    fast.nextPacket(PacketType.DIAL_RSP);

    // The slow stream's HTTP/2 window (1 MiB) plus its 256 KiB queue cannot take 2 MiB.
    for (int i = 0; i < 64; i++) {
      agent.send(Packets.data(1, chunk(i)));
    }
    // 2 MiB for the reading client, paced in 128 KiB windows (its own budget is 256 KiB: the wire has
    // no per-connection window, so the test agent plays the role of a TCP backend at the reader's pace).
    for (int i = 0; i < 64; i += 4) {
      for (int j = i; j < i + 4; j++) {
        agent.send(Packets.data(2, chunk(1000 + j)));
      }
      for (int j = i; j < i + 4; j++) {
        assertThat(fast.nextPacket(PacketType.DATA).getData().getData()).isEqualTo(chunk(1000 + j));
      }
    }
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(1);
    assertThat(fx.metric("konnectivity_network_proxy_server_receive_queue_overflows", "service_method", "Proxy"))
        .isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.router().establishedCount() == 1);

    // Once the slow client reads, it finds the overflow error and the end of its stream.
    slow.request(Integer.MAX_VALUE);
    Packet p;
    do {
      p = slow.nextPacket();
    } while (p.getType() == PacketType.DATA);
    assertThat(p.getType()).isEqualTo(PacketType.CLOSE_RSP);
    assertThat(p.getCloseResponse().getError()).startsWith("receive queue overflow");
    assertThat(slow.awaitClose().getCode()).isEqualTo(Status.Code.OK);
  }
}
