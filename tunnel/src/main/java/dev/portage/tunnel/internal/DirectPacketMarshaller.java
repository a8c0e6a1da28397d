package dev.portage.tunnel.internal;

import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.portage.api.konnectivity.Packet;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Request marshaller of the tunnel server's agent link: copies each received message into a pooled
 * direct buffer of its exact size (no fresh, zeroed heap array per message) and decodes a DATA packet
 * with its payload left in that buffer ({@link DataPacketDecoder}), so a frontend can write it to a
 * socket without a heap → direct copy. The {@link DirectPacket}'s receiver owns the payload buffer. Serializing
 * (responses) is {@link PacketMarshaller}'s. Same wire format. Thread-safe.
 *
 * <p>Safe with gRPC because {@code ServerCallImpl} calls {@code parse} and the listener's {@code
 * onMessage} back to back on one thread: a parsed packet is never dropped between the two.
 */
public final class DirectPacketMarshaller implements MethodDescriptor.Marshaller<DirectPacket> {
  private final ByteBufAllocator alloc;

  /** Buffers come from {@code alloc}, which should pool direct memory (Netty's default does). */
  public DirectPacketMarshaller(ByteBufAllocator alloc) {
    this.alloc = Objects.requireNonNull(alloc, "alloc");
  }

  /** {@code method} with this marshaller for requests and {@link PacketMarshaller} for responses (agent link). */
  public MethodDescriptor<DirectPacket, Packet> forRequests(MethodDescriptor<Packet, Packet> method) {
    return method.toBuilder(this, PacketMarshaller.INSTANCE).build();
  }

  /** {@code method} with {@link PacketMarshaller} for requests and this marshaller for responses (gRPC frontend). */
  public MethodDescriptor<Packet, DirectPacket> forResponses(MethodDescriptor<Packet, Packet> method) {
    return method.toBuilder(PacketMarshaller.INSTANCE, this).build();
  }

  @Override
  public InputStream stream(DirectPacket value) {
    if (value.payload() != null) {
      return new DataPacketStream(value.packet().getData().getConnectID(), value.payload());
    }
    return PacketMarshaller.INSTANCE.stream(value.packet());
  }

  @Override
  public DirectPacket parse(InputStream stream) {
    ByteBuf buf = null;
    try {
      buf = readFully(stream);
      DirectPacket data = DataPacketDecoder.decode(buf);
      if (data != null) {
        buf = null; // its payload slice owns it now
        return data;
      }
      // Not a plain DATA packet: protobuf, which copies (these packets are small and rare).
      return new DirectPacket(Packet.parseFrom(buf.nioBuffer(), ExtensionRegistryLite.getEmptyRegistry()), null);
    } catch (InvalidProtocolBufferException e) {
      throw Status.INTERNAL.withDescription("Invalid protobuf byte sequence").withCause(e).asRuntimeException();
    } catch (IOException e) {
      throw Status.INTERNAL.withDescription("cannot read the message").withCause(e).asRuntimeException();
    } finally {
      if (buf != null) {
        buf.release();
      }
    }
  }

  /** The whole message in a direct buffer of its exact size; gRPC's streams know their length. */
  private ByteBuf readFully(InputStream stream) throws IOException {
    if (!(stream instanceof KnownLength)) {
      byte[] bytes = stream.readAllBytes();
      ByteBuf buf = alloc.directBuffer(bytes.length, bytes.length);
      return buf.writeBytes(bytes);
    }
    int size = stream.available();
    ByteBuf buf = alloc.directBuffer(size, size);
    try {
      boolean views = stream instanceof HasByteBuffer h && h.byteBufferSupported();
      while (buf.isWritable()) {
        ByteBuffer chunk = views ? ((HasByteBuffer) stream).getByteBuffer() : null;
        if (chunk != null && chunk.hasRemaining()) {
          // gRPC's received (direct) frames straight into ours: one copy, no intermediate array.
          int n = Math.min(chunk.remaining(), buf.writableBytes());
          buf.writeBytes(chunk.slice(chunk.position(), n));
          skipFully(stream, n);
        } else if (buf.writeBytes(stream, buf.writableBytes()) < 0) {
          throw new IOException("message shorter than its known length " + size);
        }
      }
      if (stream.read() != -1) {
        throw new IOException("message longer than its known length " + size);
      }
      return buf;
    } catch (IOException | RuntimeException e) {
      buf.release();
      throw e;
    }
  }

  private static void skipFully(InputStream stream, int n) throws IOException {
    for (int left = n; left > 0; ) {
      long skipped = stream.skip(left);
      if (skipped <= 0) {
        throw new IOException("message stream did not skip " + left + " bytes it showed");
      }
      left -= (int) skipped;
    }
  }
}
