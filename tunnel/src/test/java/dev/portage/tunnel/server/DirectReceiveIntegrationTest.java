package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The agent link's receive path: every message from an agent lands in a buffer of the server's receive
 * allocator, and each one is freed again whether its payload was written to a client or dropped. The
 * allocator here is unpooled and instrumented, so "nothing leaked" is its used direct memory at zero.
 * The server's gRPC connections (agent link and gRPC frontend) allocate from it too.
 */
class DirectReceiveIntegrationTest {
  private static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";
  private final CountingAllocator alloc = new CountingAllocator();
  private ServerFixture fx;
  private Socket socket;

  @AfterEach
  void tearDown() throws Exception {
    if (socket != null) {
      socket.close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  private void start(FrontendMode mode) {
    fx = new ServerFixture(b -> b.mode(mode), b -> b.allocator(alloc));
  }

  private void awaitAllFreed() {
    await().atMost(Duration.ofSeconds(10)).until(() -> alloc.usedDirectMemory() == 0);
  }

  private double dataFromAgent() {
    return fx.metric("konnectivity_network_proxy_server_stream_packets", "segment", "from_agent", "packet_type", "DATA");
  }

  private static byte[] random(int size, int seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** A CONNECT tunnel through {@code agent} established as {@code connectID}. */
  private Socket connectThrough(TestStream agent, long connectID) throws IOException {
    InetSocketAddress a = (InetSocketAddress) fx.server.frontendAddress();
    socket = new Socket("127.0.0.1", a.getPort());
    socket.setSoTimeout(10_000);
    socket.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    assertThat(new String(socket.getInputStream().readNBytes(ESTABLISHED.length()), StandardCharsets.ISO_8859_1))
        .isEqualTo(ESTABLISHED);
    return socket;
  }

  @Test
  void payloadsReachTheClientIntactAndEveryReceivedBufferIsFreed() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connectThrough(agent, 3);

    byte[][] chunks = {random(256 * 1024, 1), random(1, 2), random(100_000, 3)};
    for (byte[] c : chunks) {
      agent.send(Packets.data(3, c));
    }
    InputStream in = s.getInputStream();
    for (byte[] c : chunks) {
      assertThat(in.readNBytes(c.length)).isEqualTo(c);
    }

    awaitAllFreed();
    assertThat(dataFromAgent()).isEqualTo(3);
  }

  @Test
  void dataForAnUnknownConnectIdIsDroppedAndFreed() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connectThrough(agent, 3);

    agent.send(Packets.data(99, random(64 * 1024, 4)));
    agent.send(Packets.data(3, "next".getBytes(StandardCharsets.US_ASCII)));

    // In order on one stream: the second arrived, so the first was routed (and dropped) before it.
    assertThat(new String(s.getInputStream().readNBytes(4), StandardCharsets.US_ASCII)).isEqualTo("next");
    awaitAllFreed();
    assertThat(dataFromAgent()).isEqualTo(2);
  }

  @Test
  void dataForATunnelTheClientClosedIsDroppedAndFreed() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connectThrough(agent, 3);

    s.close();
    assertThat(agent.nextPacket(PacketType.CLOSE_REQ).getCloseRequest().getConnectID()).isEqualTo(3);
    agent.send(Packets.data(3, random(200_000, 5))); // in flight when the client went away: write fails
    agent.send(Packets.closeRsp(3));
    fx.awaitMapsEmpty();
    agent.send(Packets.data(3, random(200_000, 6))); // after the close: unknown connectID

    await().atMost(Duration.ofSeconds(10)).until(() -> dataFromAgent() == 2);
    awaitAllFreed();
  }

  @Test
  void writesQueuedForAClientThatStopsReadingAreFreedWhenItGoes() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connectThrough(agent, 3);

    // More than the socket buffers take: part waits in the channel's outbound buffer (or, past the
    // queue bound, the tunnel is closed for overflow; either way every buffer must come back).
    for (int i = 0; i < 24; i++) {
      agent.send(Packets.data(3, random(256 * 1024, 10 + i)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> dataFromAgent() == 24);
    s.close();

    fx.awaitMapsEmpty();
    awaitAllFreed();
  }

  @Test
  void agentStreamLossWithWritesStillQueuedFreesThemWhenTheClientGoes() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    TestStream agent = fx.agent("agent-a", null);
    Socket s = connectThrough(agent, 3);
    for (int i = 0; i < 12; i++) {
      agent.send(Packets.data(3, random(256 * 1024, 40 + i)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> dataFromAgent() == 12);

    agent.cancel();
    fx.awaitMapsEmpty();
    s.close();

    awaitAllFreed();
  }

  /** A Proxy stream through {@code agent} established as connectID 7. */
  private TestStream grpcTunnel(TestStream agent, boolean autoRequest) {
    TestStream f = fx.track(TestStream.frontend(fx.frontendChannel(), autoRequest));
    if (!autoRequest) {
      f.request(1);
    }
    f.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(1, 7));
    f.nextPacket(PacketType.DIAL_RSP);
    return f;
  }

  @Test
  void theGrpcFrontendFramesQueuedPayloadsIntactAndFreesThem() {
    start(FrontendMode.GRPC);
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = grpcTunnel(agent, true);

    byte[] down = random(150_000, 6);
    agent.send(Packets.data(7, down));
    agent.send(Packets.data(99, down)); // unknown: dropped

    Packet got = f.nextPacket(PacketType.DATA);
    assertThat(got.getData().getConnectID()).isEqualTo(7);
    assertThat(got.getData().getData().toByteArray()).isEqualTo(down);
    await().atMost(Duration.ofSeconds(10)).until(() -> dataFromAgent() == 2);
    awaitAllFreed();
  }

  @Test
  void payloadsQueuedForAGrpcClientThatStopsReadingAreFreedWhenItCancels() {
    start(FrontendMode.GRPC);
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = grpcTunnel(agent, false); // requested one message: the DIAL_RSP

    for (int i = 0; i < 12; i++) {
      agent.send(Packets.data(7, random(256 * 1024, 60 + i)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> dataFromAgent() == 12);
    f.cancel();

    fx.awaitMapsEmpty();
    awaitAllFreed();
  }

  @Test
  void theGrpcConnectionsReadAndFrameWithTheServersAllocator() {
    start(FrontendMode.GRPC);
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = grpcTunnel(agent, true);
    long before = alloc.allocatedBytes.get();

    byte[] down = random(150_000, 9);
    agent.send(Packets.data(7, down));
    assertThat(f.nextPacket(PacketType.DATA).getData().getData().toByteArray()).isEqualTo(down);

    // Read from the agent's socket, copied out as one message, framed toward the client: three
    // payload-sized allocations at least. With grpc-netty's own pool for the sockets it was one.
    assertThat(alloc.allocatedBytes.get() - before).isGreaterThanOrEqualTo(3L * down.length);
    awaitAllFreed();
  }

  /** Unpooled buffers with a running total of the direct capacity handed out. */
  private static final class CountingAllocator extends AbstractByteBufAllocator {
    private final UnpooledByteBufAllocator unpooled = new UnpooledByteBufAllocator(true);
    final AtomicLong allocatedBytes = new AtomicLong();

    CountingAllocator() {
      super(true);
    }

    long usedDirectMemory() {
      return unpooled.metric().usedDirectMemory();
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      allocatedBytes.addAndGet(initialCapacity);
      return unpooled.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      return unpooled.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }
}
