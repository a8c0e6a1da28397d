package dev.portage.hub.codec;

import io.netty.buffer.ByteBuf;
import java.util.function.Consumer;

/**
 * Cuts a Kubernetes protobuf watch stream into frames, whatever the chunk boundaries: each frame is
 * a 4-byte big-endian length and that many bytes (one {@code WatchEvent}). A frame over the limit
 * is skipped byte by byte (the stream stays in step) and counted; client-go itself refuses frames
 * over 16 MiB. Not thread-safe: feed it from one thread.
 */
public final class WatchFrameSplitter {

  private final int maxFrameBytes;
  private final Consumer<byte[]> sink;
  private final byte[] length = new byte[4];
  private int lengthRead;
  private byte[] frame; // the frame being filled, null while reading a length or skipping
  private int frameRead;
  private long skipping; // bytes of an oversized frame still to skip
  private long oversized;

  /**
   * @param maxFrameBytes larger frames are skipped
   * @param sink receives each complete frame's bytes
   */
  public WatchFrameSplitter(int maxFrameBytes, Consumer<byte[]> sink) {
    if (maxFrameBytes < 0) {
      throw new IllegalArgumentException("maxFrameBytes: " + maxFrameBytes + " (expected: >= 0)");
    }
    this.maxFrameBytes = maxFrameBytes;
    this.sink = sink;
  }

  /** Consumes the readable bytes of {@code buf} without changing its reader index. */
  public void feed(ByteBuf buf) {
    int at = buf.readerIndex();
    int end = buf.writerIndex();
    while (at < end) {
      if (skipping > 0) {
        int n = (int) Math.min(skipping, end - at);
        skipping -= n;
        at += n;
      } else if (frame == null) {
        length[lengthRead++] = buf.getByte(at++);
        if (lengthRead == 4) {
          lengthRead = 0;
          long n = ((length[0] & 0xffL) << 24) | ((length[1] & 0xff) << 16)
              | ((length[2] & 0xff) << 8) | (length[3] & 0xff);
          if (n > maxFrameBytes) {
            skipping = n;
            oversized++;
          } else {
            frame = new byte[(int) n];
            frameRead = 0;
            emitIfFull();
          }
        }
      } else {
        int n = Math.min(frame.length - frameRead, end - at);
        buf.getBytes(at, frame, frameRead, n);
        frameRead += n;
        at += n;
        emitIfFull();
      }
    }
  }

  private void emitIfFull() {
    if (frameRead == frame.length) {
      byte[] done = frame;
      frame = null;
      sink.accept(done);
    }
  }

  /** Frames skipped because they were over the limit. */
  public long oversizedFrames() {
    return oversized;
  }
}
