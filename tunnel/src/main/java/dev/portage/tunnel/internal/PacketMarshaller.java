package dev.portage.tunnel.internal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import dev.portage.api.konnectivity.Packet;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;

/**
 * gRPC marshaller of konnectivity {@link Packet}s that parses a received message with one copy: the
 * message is read into a fresh array and DATA payloads alias it (protobuf's aliasing mode), instead of
 * being copied out of a reused buffer a second time. Serializing is protobuf's. Same wire format.
 * Stateless and thread-safe.
 */
public final class PacketMarshaller implements MethodDescriptor.Marshaller<Packet> {
  public static final PacketMarshaller INSTANCE = new PacketMarshaller();

  private static final MethodDescriptor.Marshaller<Packet> PROTOBUF =
      ProtoUtils.marshaller(Packet.getDefaultInstance());

  private PacketMarshaller() {}

  /** {@code method} with this marshaller both ways (same name, type and wire format). */
  public static MethodDescriptor<Packet, Packet> of(MethodDescriptor<Packet, Packet> method) {
    return method.toBuilder(INSTANCE, INSTANCE).build();
  }

  /** gRPC's message streams know their length: read into an exact array, else collect. */
  private static byte[] readFully(InputStream stream) throws IOException {
    if (stream instanceof KnownLength) {
      int size = stream.available();
      byte[] bytes = new byte[size];
      if (stream.readNBytes(bytes, 0, size) == size && stream.read() == -1) {
        return bytes;
      }
      throw new IOException("message shorter or longer than its known length " + size);
    }
    return stream.readAllBytes();
  }

  @Override
  public InputStream stream(Packet value) {
    return PROTOBUF.stream(value);
  }

  @Override
  public Packet parse(InputStream stream) {
    try {
      // newCodedInput() of an unsafely wrapped array is protobuf's only public way to mark the input
      // immutable; CodedInputStream.newInstance(byte[]) is not, and then aliasing is silently off and
      // every DATA payload is copied out a second time (measured: 4 % of the server's CPU samples).
      CodedInputStream in = UnsafeByteOperations.unsafeWrap(readFully(stream)).newCodedInput();
      in.enableAliasing(true); // the array is this message's alone: payloads may point into it
      in.setSizeLimit(Integer.MAX_VALUE); // gRPC's max inbound message size already bounds it
      return Packet.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
    } catch (InvalidProtocolBufferException e) {
      throw Status.INTERNAL.withDescription("Invalid protobuf byte sequence").withCause(e).asRuntimeException();
    } catch (IOException e) {
      throw Status.INTERNAL.withDescription("cannot read the message").withCause(e).asRuntimeException();
    }
  }
}
