package dev.portage.proxy.mesh;

import dev.portage.core.http.LoopExecutor;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of one inbound request, streamed to the current attempt's upstream channel with
 * backpressure (the inbound channel reads again only when the last write to the upstream completed)
 * and kept in a replay buffer while it fits in {@code replayLimit} bytes, so a retry can send it
 * again. Once the body outgrows the buffer the chunks already sent are dropped and the request can no
 * longer be replayed.
 *
 * <p>Confined to the inbound channel's event loop: {@link #onContent} is called there, {@link #attach}
 * and {@link #detach} hop there. Owns every chunk it holds; {@link #release()} frees them. A request
 * without a body shares one stateless instance ({@link #of}): complete from the start, nothing to
 * send, replay or free.
 */
final class RequestBody {

  private final Channel inbound;
  private final boolean hasBody;
  private final int replayLimit;
  private final List<HttpContent> chunks;
  private int base; // absolute index of chunks.get(0)
  private long bytes;
  private volatile boolean overflowed;
  private volatile boolean complete;
  private volatile boolean released;
  private Channel sink;
  private int sinkPos; // absolute index of the next chunk to write to the sink
  private long attempts;

  /** The body of every request without one: no state, so one for all. */
  private static final RequestBody NONE = new RequestBody(null, false, 0);

  private RequestBody(Channel inbound, boolean hasBody, int replayLimit) {
    this.inbound = inbound;
    this.hasBody = hasBody;
    this.replayLimit = replayLimit;
    this.chunks = hasBody ? new ArrayList<>() : List.of();
  }

  /** The body of a request read from {@code inbound}; one shared instance when it has none. */
  static RequestBody of(Channel inbound, boolean hasBody, int replayLimit) {
    return hasBody ? new RequestBody(inbound, true, replayLimit) : NONE;
  }

  /** Whether a body follows the head at all. */
  boolean hasBody() {
    return hasBody;
  }

  /** Whether the whole body has been received from the client (at once when there is none). */
  boolean isComplete() {
    return !hasBody || complete;
  }

  /** Whether another attempt could send the body again from the start. */
  boolean replayable() {
    return !hasBody || (!overflowed && !released);
  }

  /** A chunk read from the client; ownership passes to this body. */
  void onContent(HttpContent content) {
    if (!hasBody || released) {
      // Without a body only the decoder's empty end comes: nothing to send or replay.
      content.release();
      return;
    }
    chunks.add(content);
    bytes += content.content().readableBytes();
    if (content instanceof LastHttpContent) {
      complete = true;
    }
    if (bytes > replayLimit) {
      overflowed = true;
    }
    flush();
  }

  /**
   * Starts sending the body to {@code upstream} from its first byte (any thread). The caller has
   * checked {@link #replayable()} for every attempt but the first.
   */
  void attach(Channel upstream) {
    if (!hasBody) {
      return;
    }
    LoopExecutor.run(inbound.eventLoop(), () -> {
      if (released) {
        return;
      }
      attempts++;
      sink = upstream;
      sinkPos = base;
      if (base > 0 && attempts > 1) {
        // Lost the start of the body: this attempt cannot be served.
        upstream.close();
        return;
      }
      flush();
      if (sink == upstream && !complete && sinkPos == base + chunks.size()) {
        inbound.read();
      }
    });
  }

  /** Stops sending to {@code upstream} (any thread); a no-op if another attempt took over. */
  void detach(Channel upstream) {
    if (!hasBody) {
      return;
    }
    if (inbound.eventLoop().inEventLoop()) {
      detachNow(upstream); // the usual case, without a task object per request
    } else {
      inbound.eventLoop().execute(() -> detachNow(upstream));
    }
  }

  private void detachNow(Channel upstream) {
    if (sink == upstream) {
      sink = null;
    }
  }

  /** Frees the replay buffer; later chunks are dropped. On the inbound event loop. */
  void release() {
    if (!hasBody) {
      return;
    }
    released = true;
    sink = null;
    if (!chunks.isEmpty()) {
      for (HttpContent c : chunks) {
        c.release();
      }
      chunks.clear();
    }
  }

  private void flush() {
    Channel s = sink;
    if (s == null) {
      return;
    }
    ChannelFuture last = null;
    while (sinkPos < base + chunks.size()) {
      HttpContent c = chunks.get(sinkPos - base);
      last = s.write(c.retainedDuplicate());
      sinkPos++;
    }
    if (last == null) {
      return;
    }
    s.flush();
    if (overflowed) {
      // Nothing will be replayed: keep only what this sink has not been given yet.
      int sent = sinkPos - base;
      for (int i = 0; i < sent; i++) {
        chunks.get(i).release();
      }
      chunks.subList(0, sent).clear();
      base = sinkPos;
    }
    if (!complete) {
      last.addListener(f -> {
        if (f.isSuccess()) {
          LoopExecutor.run(inbound.eventLoop(), () -> {
            if (sink == s && !complete && sinkPos == base + chunks.size()) {
              inbound.read();
            }
          });
        }
      });
    }
  }
}
