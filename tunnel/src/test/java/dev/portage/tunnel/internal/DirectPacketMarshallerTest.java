package dev.portage.tunnel.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DirectPacketMarshallerTest {
  // Unpooled and instrumented: usedDirectMemory() is exactly what is still allocated.
  private final UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(true);
  private final DirectPacketMarshaller marshaller = new DirectPacketMarshaller(alloc);

  @AfterEach
  void nothingStaysAllocated() {
    assertThat(alloc.metric().usedDirectMemory()).isZero();
  }

  private static Packet data(byte[] payload) {
    return Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(42).setData(ByteString.copyFrom(payload))).build();
  }

  private static byte[] payload(int size, int seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] wire(InputStream in) throws Exception {
    try (in) {
      return in.readAllBytes();
    }
  }

  @Test
  void aDataPayloadStaysInADirectBufferOfTheMessageFreedByItsRelease() {
    byte[] payload = payload(256 * 1024, 2);
    Packet p = data(payload);

    DirectPacket back = marshaller.parse(PacketMarshaller.INSTANCE.stream(p)); // KnownLength, like gRPC's

    assertThat(back.packet().getType()).isEqualTo(PacketType.DATA);
    assertThat(back.packet().getData().getConnectID()).isEqualTo(42);
    assertThat(back.packet().getData().getData()).as("payload travels in the buffer").isEmpty();
    assertThat(back.payload().isDirect()).isTrue();
    assertThat(ByteBufUtil.getBytes(back.payload())).isEqualTo(payload);
    // One allocation of the message's size: the payload is a slice of it, not a copy.
    assertThat(alloc.metric().usedDirectMemory()).isEqualTo(p.getSerializedSize());

    assertThat(back.payload().release()).isTrue();
  }

  @Test
  void streamsTheSameBytesProtobufWritesForEitherShape() throws Exception {
    Packet p = data(payload(300 * 1024, 1));
    DirectPacket direct = marshaller.parse(PacketMarshaller.INSTANCE.stream(p));
    try {
      assertThat(wire(marshaller.stream(direct))).isEqualTo(p.toByteArray());
    } finally {
      direct.payload().release();
    }
    assertThat(wire(marshaller.stream(new DirectPacket(p, null)))).isEqualTo(p.toByteArray());
  }

  @Test
  void aPlainStreamWithoutKnownLengthIsReadToItsEnd() {
    Packet p = data(payload(1000, 3));
    DirectPacket back = marshaller.parse(new ByteArrayInputStream(p.toByteArray()));
    assertThat(ByteBufUtil.getBytes(back.payload())).isEqualTo(p.getData().getData().toByteArray());
    back.payload().release();
  }

  @Test
  void readsGrpcsByteBufferViewsAcrossSeveralFrames() {
    byte[] payload = payload(200 * 1024, 3);
    Packet p = data(payload);

    DirectPacket back = marshaller.parse(new FramedStream(p.toByteArray(), 64 * 1024 + 7));

    assertThat(back.packet().getData().getConnectID()).isEqualTo(42);
    assertThat(ByteBufUtil.getBytes(back.payload())).isEqualTo(payload);
    back.payload().release();
  }

  @Test
  void otherPacketsAreProtobufsWholeAndKeepNoBuffer() {
    Packet p = Packet.newBuilder().setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(7).setConnectID(3).setError("refused")).build();
    Packet withError = Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(1).setError("eof").setData(ByteString.copyFromUtf8("x"))).build();

    for (Packet each : new Packet[] {p, withError}) {
      DirectPacket back = marshaller.parse(new FramedStream(each.toByteArray(), 5));
      assertThat(back.packet()).isEqualTo(each);
      assertThat(back.payload()).isNull();
      assertThat(alloc.metric().usedDirectMemory()).isZero();
    }
  }

  @Test
  void malformedBytesAreAnInternalStatusAndFreeTheirBuffer() {
    byte[] whole = data(new byte[100]).toByteArray();
    byte[] truncated = Arrays.copyOf(whole, whole.length - 10);

    assertThatThrownBy(() -> marshaller.parse(new FramedStream(truncated, 16)))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.getStatus().getDescription()).isEqualTo("Invalid protobuf byte sequence");
        });
  }

  @Test
  void aStreamShorterThanItsKnownLengthIsAnInternalStatus() {
    byte[] wire = data(new byte[100]).toByteArray();
    InputStream lying = new FramedStream(wire, 32) {
      @Override
      public int available() {
        return wire.length + 5;
      }
    };

    assertThatThrownBy(() -> marshaller.parse(lying))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.getStatus().getDescription()).isEqualTo("cannot read the message");
        });
  }

  @Test
  void keepsTheMethodsNameAndTypeWithThisMarshallerOnTheChosenSide() {
    MethodDescriptor<DirectPacket, Packet> agent = marshaller.forRequests(AgentServiceGrpc.getConnectMethod());
    assertThat(agent.getFullMethodName()).isEqualTo("AgentService/Connect");
    assertThat(agent.getType()).isEqualTo(MethodDescriptor.MethodType.BIDI_STREAMING);
    assertThat(agent.getRequestMarshaller()).isSameAs(marshaller);
    assertThat(agent.getResponseMarshaller()).isSameAs(PacketMarshaller.INSTANCE);
    MethodDescriptor<Packet, DirectPacket> proxy = marshaller.forResponses(ProxyServiceGrpc.getProxyMethod());
    assertThat(proxy.getFullMethodName()).isEqualTo("ProxyService/Proxy");
    assertThat(proxy.getRequestMarshaller()).isSameAs(PacketMarshaller.INSTANCE);
    assertThat(proxy.getResponseMarshaller()).isSameAs(marshaller);
  }

  @Test
  void aPayloadBufferIsWrittenAsProtobufWouldWriteThePacketAndLeftToItsOwner() throws Exception {
    for (long connectID : new long[] {0, 1, 300, -5, Long.MAX_VALUE}) {
      for (int size : new int[] {0, 1, 127, 128, 70_000}) {
        byte[] payload = payload(size, size);
        Packet p = Packet.newBuilder().setType(PacketType.DATA)
            .setData(Data.newBuilder().setConnectID(connectID).setData(ByteString.copyFrom(payload))).build();
        io.netty.buffer.ByteBuf buf = alloc.directBuffer(size + 3).writeZero(3).writeBytes(payload).skipBytes(3);
        try {
          DirectPacket d = DirectPacket.data(connectID, buf);
          InputStream in = marshaller.stream(d);
          assertThat(in.available()).isEqualTo(p.getSerializedSize());
          java.io.ByteArrayOutputStream drained = new java.io.ByteArrayOutputStream();
          assertThat(((io.grpc.Drainable) in).drainTo(drained)).isEqualTo(p.getSerializedSize());
          assertThat(drained.toByteArray()).as("connectID %d, %d bytes", connectID, size).isEqualTo(p.toByteArray());
          assertThat(wire(marshaller.stream(d))).isEqualTo(p.toByteArray()); // read() path
          assertThat(buf.refCnt()).isEqualTo(1);
          assertThat(buf.readableBytes()).isEqualTo(size);
        } finally {
          buf.release();
        }
      }
    }
  }

  /**
   * A message as gRPC hands it over: known length and the bytes as a run of direct frame buffers
   * shown one at a time through {@link HasByteBuffer} (like grpc-netty's composite of received frames).
   */
  private static class FramedStream extends InputStream implements KnownLength, HasByteBuffer {
    private final ByteBuffer all;
    private final int frame;

    FramedStream(byte[] wire, int frame) {
      this.all = ByteBuffer.allocateDirect(wire.length).put(wire).flip();
      this.frame = frame;
    }

    @Override
    public boolean byteBufferSupported() {
      return true;
    }

    @Override
    public ByteBuffer getByteBuffer() {
      if (!all.hasRemaining()) {
        return null;
      }
      int inFrame = frame - all.position() % frame;
      return all.slice(all.position(), Math.min(inFrame, all.remaining()));
    }

    @Override
    public int read() {
      return all.hasRemaining() ? all.get() & 0xff : -1;
    }

    @Override
    public long skip(long n) {
      int k = (int) Math.min(n, all.remaining());
      all.position(all.position() + k);
      return k;
    }

    @Override
    public int available() {
      return all.remaining();
    }
  }
}
