package dev.portage.tunnel.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PacketMarshallerTest {
  private static Packet data(byte[] payload) {
    return Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(42).setData(ByteString.copyFrom(payload))).build();
  }

  @Test
  void parsesWhatProtobufWritesWithTheSameBytesOnTheWire() throws Exception {
    byte[] payload = new byte[300 * 1024];
    new Random(1).nextBytes(payload);
    Packet p = data(payload);
    byte[] wire;
    try (InputStream in = PacketMarshaller.INSTANCE.stream(p)) {
      wire = in.readAllBytes();
    }
    assertThat(wire).isEqualTo(p.toByteArray());
    // gRPC hands the marshaller a KnownLength stream; a plain one is read to its end.
    Packet back = PacketMarshaller.INSTANCE.parse(PacketMarshaller.INSTANCE.stream(p));
    assertThat(back).isEqualTo(p);
    assertThat(PacketMarshaller.INSTANCE.parse(new ByteArrayInputStream(wire))).isEqualTo(p);
    assertThat(PacketMarshaller.INSTANCE.parse(new ByteArrayInputStream(new byte[0])))
        .isEqualTo(Packet.getDefaultInstance());
  }

  @Test
  void aDataPayloadIsAViewIntoTheReceivedMessageNotASecondCopy() {
    byte[] payload = new byte[256 * 1024];
    new Random(2).nextBytes(payload);
    Packet p = data(payload);
    int wireLength = p.getSerializedSize();

    Packet back = PacketMarshaller.INSTANCE.parse(PacketMarshaller.INSTANCE.stream(p));

    // An aliased payload's buffer spans the whole message array and starts after the packet's header;
    // a copied payload would be an array of its own (capacity = payload, position 0).
    java.nio.ByteBuffer view = back.getData().getData().asReadOnlyByteBuffer();
    assertThat(view.capacity()).isEqualTo(wireLength);
    assertThat(view.position()).isEqualTo(wireLength - payload.length);
    assertThat(back.getData().getData().toByteArray()).isEqualTo(payload);
  }

  @Test
  void keepsTheMethodsNameAndTypeAndUsesItBothWays() {
    MethodDescriptor<Packet, Packet> m = PacketMarshaller.of(AgentServiceGrpc.getConnectMethod());
    assertThat(m.getFullMethodName()).isEqualTo("AgentService/Connect");
    assertThat(m.getType()).isEqualTo(MethodDescriptor.MethodType.BIDI_STREAMING);
    assertThat(m.getRequestMarshaller()).isSameAs(PacketMarshaller.INSTANCE);
    assertThat(m.getResponseMarshaller()).isSameAs(PacketMarshaller.INSTANCE);
  }

  @Test
  void malformedBytesAreAnInternalStatusWithAClearDescription() {
    byte[] truncated = data(new byte[100]).toByteArray();
    byte[] bad = java.util.Arrays.copyOf(truncated, truncated.length - 10);
    assertThatThrownBy(() -> PacketMarshaller.INSTANCE.parse(new ByteArrayInputStream(bad)))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.getStatus().getDescription()).isEqualTo("Invalid protobuf byte sequence");
        });
  }
}
