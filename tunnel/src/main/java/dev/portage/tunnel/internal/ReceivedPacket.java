package dev.portage.tunnel.internal;

import dev.portage.api.konnectivity.Packet;
import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * A packet received by {@link DirectPacketMarshaller}. For a DATA packet decoded on the direct path,
 * {@code payload} is its payload in a pooled direct buffer and the packet's own {@code data} field is
 * empty; otherwise {@code payload} is null and the packet is complete. Whoever receives it owns {@code
 * payload} and must release it exactly once. Immutable.
 */
public record ReceivedPacket(Packet packet, ByteBuf payload) {
  public ReceivedPacket {
    Objects.requireNonNull(packet, "packet");
  }
}
