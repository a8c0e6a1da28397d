package dev.portage.tunnel.internal;

import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import io.netty.buffer.ByteBuf;

/**
 * Decodes the common shape of a DATA packet ({@code type = DATA}, {@code data {connectID, data}}, each
 * field at most once) straight from a buffer, leaving the payload where it is. Protobuf cannot: since
 * 4.x a {@code ByteString} cannot be a view of direct memory ({@code UnsafeByteOperations.unsafeWrap}
 * of a direct {@code ByteBuffer} copies it into a fresh heap array, and {@code CodedInputStream} does
 * the same to a direct buffer before parsing). Anything else (other packet types, a DATA error, unknown
 * or repeated fields, malformed bytes) is left to protobuf: {@link #decode} returns null. Stateless.
 */
final class DataPacketDecoder {
  // Tags (field number << 3 | wire type) of the fields this decoder knows.
  private static final long PACKET_TYPE = 1 << 3;        // varint
  private static final long PACKET_DATA = 4 << 3 | 2;    // length-delimited
  private static final long DATA_CONNECT_ID = 1 << 3;    // varint
  private static final long DATA_PAYLOAD = 3 << 3 | 2;   // length-delimited

  private DataPacketDecoder() {}

  /**
   * The readable bytes of {@code buf} as a DATA packet (without its payload) and its payload as a slice
   * of {@code buf} sharing its reference count, or null. Reads without moving {@code buf}'s indices.
   */
  static DirectPacket decode(ByteBuf buf) {
    Cursor c = new Cursor(buf, buf.readerIndex(), buf.writerIndex());
    long type = -1;
    long connectID = 0;
    int payloadAt = -1;
    int payloadEnd = -1;
    boolean dataSeen = false;
    while (c.hasMore()) {
      long tag = c.varint();
      if (tag == PACKET_TYPE && type == -1) {
        type = c.varint();
      } else if (tag == PACKET_DATA && !dataSeen) {
        dataSeen = true;
        int end = c.lengthEnd();
        boolean idSeen = false;
        while (c.hasMore() && c.at < end) {
          long dataTag = c.varint();
          if (dataTag == DATA_CONNECT_ID && !idSeen) {
            idSeen = true;
            connectID = c.varint();
          } else if (dataTag == DATA_PAYLOAD && payloadAt < 0) {
            payloadEnd = c.lengthEnd();
            payloadAt = c.at;
            c.at = payloadEnd;
          } else {
            return null;
          }
        }
        if (c.at != end) {
          return null; // a field ran past the data message
        }
      } else {
        return null;
      }
    }
    if (c.malformed || type != PacketType.DATA_VALUE || !dataSeen) {
      return null;
    }
    Packet packet = Packet.newBuilder()
        .setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectID))
        .build();
    ByteBuf payload = payloadAt < 0 ? buf.slice(buf.readerIndex(), 0) : buf.slice(payloadAt, payloadEnd - payloadAt);
    return new DirectPacket(packet, payload);
  }

  /** A read position in {@code [at, limit)} of a buffer; {@link #malformed} once a read ran past the limit. */
  private static final class Cursor {
    final ByteBuf buf;
    final int limit;
    int at;
    boolean malformed;

    Cursor(ByteBuf buf, int at, int limit) {
      this.buf = buf;
      this.at = at;
      this.limit = limit;
    }

    boolean hasMore() {
      return !malformed && at < limit;
    }

    long varint() {
      long value = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (at >= limit) {
          malformed = true;
          return 0;
        }
        byte b = buf.getByte(at++);
        value |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          return value;
        }
      }
      malformed = true;
      return 0;
    }

    /** Reads a length prefix; returns where the field ends (inside the limit, else marks malformed). */
    int lengthEnd() {
      long length = varint();
      if (malformed || length < 0 || length > limit - at) {
        malformed = true;
        return limit;
      }
      return at + (int) length;
    }
  }
}
