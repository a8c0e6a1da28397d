package dev.portage.tunnel.internal;

import com.google.protobuf.CodedOutputStream;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * The wire bytes of a DATA packet whose payload is in a buffer: protobuf's encoding of {@code type},
 * {@code data.connectID} and the payload's length, then the payload, drained straight from the buffer
 * into gRPC's framer (a direct buffer goes through Netty's small reused chunk, not a payload-sized
 * array). Does not own the payload; the sender releases it once {@code sendMessage} returned. Single
 * use, one thread.
 */
final class DataPacketStream extends InputStream implements Drainable, KnownLength {
  private static final int PACKET_TYPE = 1 << 3;
  private static final int PACKET_DATA = 4 << 3 | 2;
  private static final int DATA_CONNECT_ID = 1 << 3;
  private static final int DATA_PAYLOAD = 3 << 3 | 2;
  private static final int DATA_VALUE = 4;

  private final byte[] header;
  private final ByteBuf payload;
  private int headerAt;
  private int payloadAt;

  DataPacketStream(long connectID, ByteBuf payload) {
    this.payload = payload;
    int size = payload.readableBytes();
    int dataSize = (connectID == 0 ? 0 : 1 + CodedOutputStream.computeUInt64SizeNoTag(connectID))
        + (size == 0 ? 0 : 1 + CodedOutputStream.computeUInt32SizeNoTag(size) + size);
    header = new byte[2 + 1 + CodedOutputStream.computeUInt32SizeNoTag(dataSize) + (dataSize - size)];
    CodedOutputStream out = CodedOutputStream.newInstance(header);
    try {
      out.writeUInt32NoTag(PACKET_TYPE);
      out.writeUInt32NoTag(DATA_VALUE);
      out.writeUInt32NoTag(PACKET_DATA);
      out.writeUInt32NoTag(dataSize);
      if (connectID != 0) {
        out.writeUInt32NoTag(DATA_CONNECT_ID);
        out.writeUInt64NoTag(connectID);
      }
      if (size != 0) {
        out.writeUInt32NoTag(DATA_PAYLOAD);
        out.writeUInt32NoTag(size);
      }
      out.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("header size miscomputed", e);
    }
  }

  @Override
  public int drainTo(OutputStream target) throws IOException {
    int n = available();
    target.write(header, headerAt, header.length - headerAt);
    headerAt = header.length;
    int left = payload.readableBytes() - payloadAt;
    payload.getBytes(payload.readerIndex() + payloadAt, target, left);
    payloadAt += left;
    return n;
  }

  @Override
  public int available() {
    return header.length - headerAt + payload.readableBytes() - payloadAt;
  }

  @Override
  public int read() {
    if (headerAt < header.length) {
      return header[headerAt++] & 0xff;
    }
    if (payloadAt < payload.readableBytes()) {
      return payload.getByte(payload.readerIndex() + payloadAt++) & 0xff;
    }
    return -1;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (len == 0) {
      return 0;
    }
    if (headerAt < header.length) {
      int n = Math.min(len, header.length - headerAt);
      System.arraycopy(header, headerAt, b, off, n);
      headerAt += n;
      return n;
    }
    int left = payload.readableBytes() - payloadAt;
    if (left == 0) {
      return -1;
    }
    int n = Math.min(len, left);
    payload.getBytes(payload.readerIndex() + payloadAt, b, off, n);
    payloadAt += n;
    return n;
  }
}
