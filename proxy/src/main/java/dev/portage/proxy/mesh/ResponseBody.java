package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpStream;
import dev.portage.core.http.KeepAlive;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * Reads one response from an upstream {@link HttpStream}: tells its {@link Listener} the response
 * head (or the failure before it), then streams the body to the sink given to {@link #pipeTo},
 * reading the upstream again only when the last write to the sink has completed. At the end of the
 * body the stream goes back to its pool (reusable when both sides kept the connection alive and the
 * request was fully sent). Lives on the upstream channel's event loop; {@link #pipeTo} and {@link
 * #discard} hop there. Chunks read before a sink is attached are held (one read's worth) and freed
 * on discard. How the response ended (the {@code grpc-status} of its trailers, an upstream error, a
 * discard) is kept for the classification of the exchange. As a {@link Runnable} it discards, so it
 * can be a request's cancel hook as it is; as a {@link ChannelFutureListener} it hears the last
 * write to the sink.
 */
final class ResponseBody extends ChannelInboundHandlerAdapter implements Runnable, ChannelFutureListener {

  /**
   * What the dispatcher of the exchange hears, on the upstream event loop: exactly one of {@link
   * #head} and {@link #failed}, then {@link #ended} once the exchange is over (body written,
   * discarded or failed). Callbacks instead of futures: a future and a stage per step add up on
   * the per-request path.
   */
  interface Listener {
    void head(ProxyResponse response);

    /** The exchange failed before a final response head ({@link ProxyException.UpstreamFailure}, or a cancel). */
    void failed(Throwable cause);

    void ended();
  }

  /**
   * Told once, on the upstream event loop, how the relay to the sink given to {@link #pipeTo}
   * ended: {@code body} is the response piped (one object can hear many in turn), {@code cause}
   * null when the body was written whole, else why it was not.
   */
  interface BodyEnd {
    void ended(ResponseBody body, Throwable cause);
  }

  private final HttpStream stream;
  private final RequestBody request;
  private final Listener listener;
  private BodyEnd end; // set by pipeTo
  private boolean completed;
  private Throwable endCause; // why the exchange ended short, once completed
  private boolean headDone;
  // Chunks read but not written yet, a read's worth at most, oldest first: the first in a field
  // (a small response never needs more), later ones in a queue made for them.
  private HttpContent heldFirst;
  private ArrayDeque<HttpContent> heldMore;
  private boolean keepAlive = true;
  private boolean ended;
  private boolean discarded;
  private Channel sink;
  private HttpResponse head; // the final head given to the listener
  private int trailerGrpcStatus = GrpcStatus.NONE;
  private Throwable upstreamError; // the upstream failed mid-body
  private boolean reusable; // set with the last write: whether the stream may go back to the pool
  private ChannelFutureListener readMore; // reads again after a write that was not the last

  ResponseBody(HttpStream stream, RequestBody request, Listener listener) {
    this.stream = stream;
    this.request = request;
    this.listener = listener;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    ctx.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (ended || discarded) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (!headDone) {
      if (!(msg instanceof HttpResponse response)) {
        ReferenceCountUtil.release(msg);
        fail(new IllegalStateException("response body before its head"), true);
        return;
      }
      if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL
          && response.status().code() != 101) {
        // 1xx interim answers (100 Continue) are hop-by-hop here: wait for the final one.
        ReferenceCountUtil.release(msg);
        ctx.read();
        return;
      }
      keepAlive = KeepAlive.isKeepAlive(response)
          && (HttpFraming.isContentLengthSet(response) || HttpFraming.isChunked(response)
              || msg instanceof FullHttpResponse);
      if (msg instanceof FullHttpResponse full) {
        // Head and whole body in one message: the head the listener sees, and the body held. An
        // HTTP/1.1 client gets it as it is (flush); otherwise it is split where it is written.
        hold(full);
      }
      headDone = true;
      head = response;
      listener.head(new ProxyResponse(response, this));
      return;
    }
    if (msg instanceof HttpContent content) {
      hold(content);
      flush();
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (!ended) {
      fail(new IllegalStateException("connection closed by " + stream.origin()), true);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    fail(cause, true);
  }

  /** The status of the response head given to the listener, or -1 before it. */
  int status() {
    HttpResponse h = head;
    return h == null ? -1 : h.status().code();
  }

  /** The final response head given to the listener, or null. */
  HttpResponse head() {
    return head;
  }

  /**
   * The response's {@code grpc-status}: from its trailers, or from its head when it had no body
   * (trailers-only); {@link GrpcStatus#NONE} if it carried none (or has not ended yet).
   */
  int grpcStatus() {
    if (trailerGrpcStatus != GrpcStatus.NONE) {
      return trailerGrpcStatus;
    }
    HttpResponse h = head;
    return h == null ? GrpcStatus.NONE : GrpcStatus.of(h.headers());
  }

  /** The upstream failure that cut the response short after its head, or null. */
  Throwable upstreamError() {
    return upstreamError;
  }

  /** Whether the response was dropped by this side (client gone, a retry, a timeout) before its end. */
  boolean wasDiscarded() {
    return discarded;
  }

  /** Discards: the request's cancel hook. */
  @Override
  public void run() {
    discard();
  }

  /**
   * Streams the body to {@code sink} (any thread), after {@code head} (the response head as the
   * client gets it) unless that is null because the caller wrote it; {@code end} hears how that
   * ended. A body already read whole goes out with its head as one message, so the encoder writes
   * both into one buffer and the client one write.
   */
  void pipeTo(Channel sink, HttpResponse head, BodyEnd end) {
    EventLoop loop = stream.channel().eventLoop();
    if (loop.inEventLoop()) {
      pipeNow(sink, head, end); // the usual case: both sides on one loop, no task object
    } else {
      loop.execute(() -> pipeNow(sink, head, end));
    }
  }

  private void pipeNow(Channel sink, HttpResponse head, BodyEnd end) {
    this.end = end;
    if (completed) {
      if (head != null) {
        sink.write(headOnly(head), sink.voidPromise());
      }
      end.ended(this, endCause);
      return;
    }
    this.sink = sink;
    if (nothingHeld() && !ended) {
      if (head != null) {
        sink.write(headOnly(head), sink.voidPromise()); // flushed with the body's first write
      }
      stream.channel().read();
    } else {
      flush(head);
    }
  }

  /** Drops the body and aborts the stream (any thread). */
  void discard() {
    EventLoop loop = stream.channel().eventLoop();
    if (!loop.inEventLoop()) {
      loop.execute(this); // run() discards
      return;
    }
    if (discarded) {
      return;
    }
    discarded = true;
    releaseHeld();
    if (!headDone) {
      headDone = true;
      listener.failed(new java.util.concurrent.CancellationException("request cancelled"));
    }
    if (!ended) {
      ended = true;
      stream.abort();
    }
    complete(null);
  }

  private void flush() {
    flush(null);
  }

  /** Writes what is held (after {@code head}, if not null) and flushes. */
  private void flush(HttpResponse head) {
    Channel s = sink;
    if (s == null || discarded) {
      return;
    }
    ChannelFuture last = null;
    boolean end = false;
    HttpContent c;
    if (head != null) {
      if (heldFirst instanceof LastHttpContent whole && (heldMore == null || heldMore.isEmpty())) {
        // The whole body: one message. The upstream's own whole response when it is the head
        // being sent; else the content moves into a new one and the chunk object is dropped.
        heldFirst = null;
        end = true;
        if (!whole.trailingHeaders().isEmpty()) {
          trailerGrpcStatus = GrpcStatus.of(whole.trailingHeaders());
        }
        last = s.write(whole == head ? whole : new DefaultFullHttpResponse(head.protocolVersion(),
            head.status(), whole.content(), head.headers(), whole.trailingHeaders()));
      } else {
        s.write(headOnly(head), s.voidPromise()); // a failed write fails the body's last write too
      }
    }
    while ((c = nextHeld()) != null) {
      if (c instanceof LastHttpContent lc) {
        end = true;
        if (!lc.trailingHeaders().isEmpty()) {
          trailerGrpcStatus = GrpcStatus.of(lc.trailingHeaders());
        }
        if (c instanceof HttpResponse) {
          c = new DefaultLastHttpContent(lc.content(), lc.trailingHeaders()); // the body of a whole one
        }
      }
      last = s.write(c);
    }
    if (last == null) {
      return;
    }
    s.flush();
    if (end) {
      ended = true;
      reusable = keepAlive && request.isComplete();
      last.addListener(this); // operationComplete: the last write's outcome
    } else {
      if (readMore == null) {
        readMore = f -> {
          if (f.isSuccess()) {
            stream.channel().read();
          } else {
            // The client side failed, not the endpoint.
            stream.channel().eventLoop().execute(() -> fail(f.cause(), false));
          }
        };
      }
      last.addListener(readMore);
    }
  }

  /** The last write of the body to the sink completed: the stream goes back, or is aborted. */
  @Override
  public void operationComplete(ChannelFuture f) {
    if (f.isSuccess()) {
      stream.release(reusable);
      complete(null);
    } else {
      discarded = true; // the client went away: nothing to hold against the endpoint
      stream.abort();
      complete(f.cause());
    }
  }

  private void fail(Throwable cause, boolean upstream) {
    if (ended) {
      return;
    }
    ended = true;
    if (headDone && upstream) {
      upstreamError = cause;
    } else if (!upstream) {
      discarded = true;
    }
    releaseHeld();
    stream.abort();
    if (!headDone) {
      headDone = true;
      listener.failed(new ProxyException.UpstreamFailure(stream.origin().toString(), cause));
    }
    complete(cause);
  }

  private void complete(Throwable cause) {
    if (completed) {
      return;
    }
    completed = true;
    endCause = cause;
    BodyEnd e = end;
    if (e != null) {
      e.ended(this, cause); // the client side hears first, then the exchange (as it always has)
    }
    listener.ended();
  }

  /** {@code head} without a body: a whole response's head part (its body goes separately). */
  private static HttpResponse headOnly(HttpResponse head) {
    return head instanceof HttpContent
        ? new DefaultHttpResponse(head.protocolVersion(), head.status(), head.headers())
        : head;
  }

  private void hold(HttpContent c) {
    if (heldFirst == null && (heldMore == null || heldMore.isEmpty())) {
      heldFirst = c;
    } else {
      if (heldMore == null) {
        heldMore = new ArrayDeque<>(2);
      }
      heldMore.add(c);
    }
  }

  private HttpContent nextHeld() {
    HttpContent c = heldFirst;
    if (c != null) {
      heldFirst = null;
      return c;
    }
    return heldMore == null ? null : heldMore.poll();
  }

  private boolean nothingHeld() {
    return heldFirst == null && (heldMore == null || heldMore.isEmpty());
  }

  private void releaseHeld() {
    HttpContent c;
    while ((c = nextHeld()) != null) {
      c.release();
    }
  }
}
