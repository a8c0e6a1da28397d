package dev.portage.tunnel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.WindowUpdate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class DataPacketDecoderTest {
  private static Packet data(long connectID, byte[] payload) {
    return Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectID).setData(ByteString.copyFrom(payload))).build();
  }

  /**
   * Runs {@code check} on what the decoder makes of {@code wire} in a direct buffer (with the payload
   * put back into the packet, null when the decoder declined), then frees the buffer.
   */
  private static void decoded(byte[] wire, Consumer<Packet> check) {
    ByteBuf buf = Unpooled.directBuffer(wire.length).writeBytes(wire);
    try {
      DirectPacket r = DataPacketDecoder.decode(buf);
      if (r == null) {
        check.accept(null);
        return;
      }
      assertThat(r.payload().isDirect()).isTrue();
      assertThat(r.packet().getData().getData()).isEmpty();
      assertThat(r.payload().refCnt()).as("the payload slice shares the buffer's count").isEqualTo(1);
      buf.retain();
      r.payload().release();
      assertThat(buf.refCnt()).isEqualTo(1);
      Packet p = r.packet();
      check.accept(p.toBuilder().setData(p.getData().toBuilder().setData(ByteString.copyFrom(r.payload().nioBuffer()))).build());
    } finally {
      buf.release();
    }
  }

  @Test
  void decodesWhatProtobufDecodesLeavingThePayloadInTheBuffer() {
    byte[] payload = new byte[70_000];
    new Random(1).nextBytes(payload);
    for (Packet p : new Packet[] {data(7, payload), data(-1, payload), data(Long.MAX_VALUE, new byte[0]),
        data(0, new byte[] {1})}) {
      decoded(p.toByteArray(), back -> assertThat(back).isEqualTo(p));
    }
  }

  @Test
  void fieldsInAnyOrderAreDecodedToo() throws Exception {
    Packet p = data(9, new byte[] {1, 2, 3});
    // type after the data field: hand-made wire bytes (protobuf writes in field order)
    byte[] dataField = Packet.newBuilder().setData(p.getData()).build().toByteArray();
    byte[] typeField = {0x08, 0x04};
    byte[] wire = new byte[dataField.length + 2];
    System.arraycopy(dataField, 0, wire, 0, dataField.length);
    System.arraycopy(typeField, 0, wire, dataField.length, 2);
    decoded(wire, back -> assertThat(back).isEqualTo(p));
  }

  @Test
  void leavesEverythingElseToProtobuf() {
    Packet withError = Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(1).setError("eof").setData(ByteString.copyFromUtf8("x"))).build();
    Packet close = Packet.newBuilder().setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(3)).build();
    Packet window = Packet.newBuilder().setType(PacketType.PORTAGE_WINDOW_UPDATE)
        .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(3).setBytes(10)).build();
    Packet typeOnly = Packet.newBuilder().setType(PacketType.DATA).build();
    Packet dataWithOtherType = Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setData(Data.newBuilder().setConnectID(1).setData(ByteString.copyFromUtf8("x"))).build();
    byte[] unknownField = Arrays.copyOf(data(1, new byte[] {5}).toByteArray(), data(1, new byte[] {5}).getSerializedSize() + 2);
    unknownField[unknownField.length - 2] = (byte) (9 << 3); // field 9, varint
    unknownField[unknownField.length - 1] = 1;
    byte[] truncated = data(1, new byte[100]).toByteArray();
    truncated = Arrays.copyOf(truncated, truncated.length - 1);

    for (byte[] wire : new byte[][] {withError.toByteArray(), close.toByteArray(), window.toByteArray(),
        typeOnly.toByteArray(), dataWithOtherType.toByteArray(), unknownField, truncated, new byte[0]}) {
      decoded(wire, back -> assertThat(back).isNull());
    }
  }
}
