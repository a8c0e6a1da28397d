package dev.portage.tunnel.internal;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * Wraps a socket read as the payload of a DATA packet that the caller sends at once, over a
 * per-thread scratch array: one copy out of the (direct) read buffer and no fresh array per chunk. gRPC
 * serializes a message into its own frame buffers inside {@code sendMessage}, so the payload is dead
 * before the same thread wraps the next one. Internal to the tunnel module.
 *
 * <p>Threading: the returned {@link ByteString} is valid only on the calling thread until its next
 * {@link #wrap} call; it must not be stored or handed to another thread.
 */
public final class ScratchPayload {
  /** Reads larger than this (never from the tunnel's own sockets) are copied into their own array. */
  static final int SCRATCH_BYTES = 256 * 1024;

  private static final FastThreadLocal<byte[]> SCRATCH = new FastThreadLocal<>() {
    @Override
    protected byte[] initialValue() {
      return new byte[SCRATCH_BYTES];
    }
  };

  private ScratchPayload() {}

  /** The readable bytes of {@code buf} (not consumed, not released) as a short-lived payload. */
  public static ByteString wrap(ByteBuf buf) {
    int size = buf.readableBytes();
    if (size > SCRATCH_BYTES) {
      byte[] own = new byte[size];
      buf.getBytes(buf.readerIndex(), own);
      return UnsafeByteOperations.unsafeWrap(own);
    }
    byte[] scratch = SCRATCH.get();
    buf.getBytes(buf.readerIndex(), scratch, 0, size);
    return UnsafeByteOperations.unsafeWrap(scratch, 0, size);
  }
}
