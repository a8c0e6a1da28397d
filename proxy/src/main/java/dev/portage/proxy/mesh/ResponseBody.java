package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpStream;
import dev.portage.core.http.LoopExecutor;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * Reads one response from an upstream {@link HttpStream}: completes {@link #head()} with the
 * response head, then streams the body to the sink given to {@link #pipeTo}, reading the upstream
 * again only when the last write to the sink has completed. At the end of the body the stream goes
 * back to its pool (reusable when both sides kept the connection alive and the request was fully
 * sent). Lives on the upstream channel's event loop; {@link #pipeTo} and {@link #discard} hop there.
 * Chunks read before a sink is attached are held (one read's worth) and freed on discard.
 */
final class ResponseBody extends ChannelInboundHandlerAdapter {

  private final HttpStream stream;
  private final RequestBody request;
  private final CompletableFuture<ProxyResponse> head = new CompletableFuture<>();
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private final ArrayDeque<HttpContent> held = new ArrayDeque<>();
  private boolean keepAlive = true;
  private boolean ended;
  private boolean discarded;
  private Channel sink;

  ResponseBody(HttpStream stream, RequestBody request) {
    this.stream = stream;
    this.request = request;
  }

  /** Completes with the response head, or with an {@link ProxyException.UpstreamFailure}. */
  CompletableFuture<ProxyResponse> head() {
    return head;
  }

  /** Completes when the body has been written to the sink, exceptionally if the upstream failed. */
  CompletableFuture<Void> done() {
    return done;
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
    if (!head.isDone()) {
      if (!(msg instanceof HttpResponse response)) {
        ReferenceCountUtil.release(msg);
        fail(new IllegalStateException("response body before its head"));
        return;
      }
      if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL
          && response.status().code() != 101) {
        // 1xx interim answers (100 Continue) are hop-by-hop here: wait for the final one.
        ReferenceCountUtil.release(msg);
        ctx.read();
        return;
      }
      keepAlive = HttpUtil.isKeepAlive(response)
          && (HttpUtil.isContentLengthSet(response) || HttpUtil.isTransferEncodingChunked(response)
              || msg instanceof FullHttpResponse);
      HttpResponse h = response;
      if (msg instanceof FullHttpResponse full) {
        h = new DefaultHttpResponse(full.protocolVersion(), full.status(), full.headers());
        held.add(new DefaultLastHttpContent(full.content(), full.trailingHeaders()));
      }
      head.complete(new ProxyResponse(h, this));
      return;
    }
    if (msg instanceof HttpContent content) {
      held.add(content);
      flush();
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (!ended) {
      fail(new IllegalStateException("connection closed by " + stream.origin()));
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    fail(cause);
  }

  /** Streams the body to {@code sink} (any thread). */
  CompletableFuture<Void> pipeTo(Channel sink) {
    LoopExecutor.run(stream.channel().eventLoop(), () -> {
      this.sink = sink;
      if (held.isEmpty() && !ended) {
        stream.channel().read();
      } else {
        flush();
      }
    });
    return done;
  }

  /** Drops the body and aborts the stream (any thread). */
  void discard() {
    LoopExecutor.run(stream.channel().eventLoop(), () -> {
      if (discarded) {
        return;
      }
      discarded = true;
      releaseHeld();
      if (!head.isDone()) {
        head.completeExceptionally(new java.util.concurrent.CancellationException("request cancelled"));
      }
      if (!ended) {
        ended = true;
        stream.abort();
      }
      done.complete(null);
    });
  }

  private void flush() {
    Channel s = sink;
    if (s == null || discarded) {
      return;
    }
    ChannelFuture last = null;
    boolean end = false;
    while (!held.isEmpty()) {
      HttpContent c = held.poll();
      end = c instanceof LastHttpContent;
      last = s.write(c);
    }
    if (last == null) {
      return;
    }
    s.flush();
    if (end) {
      ended = true;
      boolean reusable = keepAlive && request.isComplete();
      last.addListener(f -> {
        if (f.isSuccess()) {
          stream.release(reusable);
          done.complete(null);
        } else {
          stream.abort();
          done.completeExceptionally(f.cause());
        }
      });
    } else {
      last.addListener(f -> {
        if (f.isSuccess()) {
          stream.channel().read();
        } else {
          stream.channel().eventLoop().execute(() -> fail(f.cause()));
        }
      });
    }
  }

  private void fail(Throwable cause) {
    if (ended) {
      return;
    }
    ended = true;
    releaseHeld();
    stream.abort();
    if (!head.isDone()) {
      head.completeExceptionally(new ProxyException.UpstreamFailure(stream.origin().toString(), cause));
    }
    done.completeExceptionally(cause);
  }

  private void releaseHeld() {
    HttpContent c;
    while ((c = held.poll()) != null) {
      c.release();
    }
  }
}
