package dev.portage.tunnel.internal;

import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * A packet as {@link DirectPacketMarshaller} reads and writes it: for a DATA packet {@code payload} may
 * hold the payload in a (pooled, direct) buffer, and then the packet's own {@code data} field is empty;
 * otherwise {@code payload} is null and the packet is complete. Whoever holds a received one owns
 * {@code payload} and must release it exactly once; a sender releases it after {@code sendMessage}
 * returned (gRPC has copied the bytes into its frames by then). Immutable.
 */
public record DirectPacket(Packet packet, ByteBuf payload) {
  public DirectPacket {
    Objects.requireNonNull(packet, "packet");
    if (payload != null && packet.getType() != PacketType.DATA) {
      throw new IllegalArgumentException("payload with a " + packet.getType() + " packet (expected: DATA)");
    }
  }

  /** A DATA packet for {@code connectID} whose payload is {@code payload} (taken over). */
  public static DirectPacket data(long connectID, ByteBuf payload) {
    Packet p = Packet.newBuilder().setType(PacketType.DATA).setData(Data.newBuilder().setConnectID(connectID)).build();
    return new DirectPacket(p, Objects.requireNonNull(payload, "payload"));
  }

  /** The DATA payload's size, wherever it is. */
  public int dataSize() {
    return payload != null ? payload.readableBytes() : packet.getData().getData().size();
  }

  /** Releases the payload, if any. */
  public void release() {
    if (payload != null) {
      payload.release();
    }
  }
}
