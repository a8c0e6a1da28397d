package dev.portage.hub.cache;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.util.function.Consumer;

/**
 * Cuts a stream of concatenated JSON objects (a watch response body: one event object after the
 * other, usually newline-separated) into whole objects, whatever the chunk boundaries. It tracks
 * brace depth outside strings, so it needs no delimiter. Not thread-safe: feed it from one thread.
 */
public final class JsonObjectSplitter {

  private final int maxObjectBytes;
  private final Consumer<byte[]> sink;
  private final ByteArrayOutputStream current = new ByteArrayOutputStream();
  private int depth;
  private boolean inString;
  private boolean escaped;
  private boolean overflow;

  /**
   * @param maxObjectBytes larger objects are dropped (and the rest of the stream is still split)
   * @param sink receives each complete top-level object
   */
  public JsonObjectSplitter(int maxObjectBytes, Consumer<byte[]> sink) {
    this.maxObjectBytes = maxObjectBytes;
    this.sink = sink;
  }

  /** Consumes the readable bytes of {@code buf} without changing its reader index. */
  public void feed(ByteBuf buf) {
    for (int i = buf.readerIndex(); i < buf.writerIndex(); i++) {
      accept(buf.getByte(i));
    }
  }

  void feed(byte[] bytes) {
    for (byte b : bytes) {
      accept(b);
    }
  }

  private void accept(byte b) {
    if (depth == 0) {
      if (b == '{') {
        depth = 1;
        append(b);
      }
      return; // whitespace, newlines between objects
    }
    append(b);
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (b == '\\') {
        escaped = true;
      } else if (b == '"') {
        inString = false;
      }
      return;
    }
    if (b == '"') {
      inString = true;
    } else if (b == '{' || b == '[') {
      depth++;
    } else if (b == '}' || b == ']') {
      depth--;
      if (depth == 0) {
        if (!overflow) {
          sink.accept(current.toByteArray());
        }
        current.reset();
        overflow = false;
      }
    }
  }

  private void append(byte b) {
    if (overflow) {
      return;
    }
    if (current.size() >= maxObjectBytes) {
      overflow = true;
      current.reset();
      return;
    }
    current.write(b);
  }
}
