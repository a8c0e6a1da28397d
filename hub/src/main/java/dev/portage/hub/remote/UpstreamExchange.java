package dev.portage.hub.remote;

import dev.portage.core.balance.Pick;
import dev.portage.core.http.HopByHopHeaders;
import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.HttpStream;
import dev.portage.core.net.Relay;
import dev.portage.core.time.Ticker;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxied exchange, as the handler on the leased upstream channel: writes the request, relays
 * the response to the client, tees it into the cache, and ends the lease. The messages decoded from
 * one upstream read are written to the client and flushed once, at the read's end (one {@code
 * writev} instead of one {@code write} per 8 KiB chunk); the upstream is read again only when that
 * flush completed, so a slow client holds at most one read's worth of memory. Runs on the upstream
 * channel's event loop; the client channel is written from there (Netty hands writes over).
 */
final class UpstreamExchange extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(UpstreamExchange.class);

  private final RequestInfo info;
  private final HttpMethod method;
  private final HttpStream stream;
  private final Channel inbound;
  private final boolean keepAlive;
  private final boolean upgrade;
  private final Pick<ApiServer> pick;
  private final ResponseTee tee;
  private final Ticker ticker;
  private final long startNanos;
  private final IntConsumer onResponse;
  private final RemoteProxy.Fallback fallback;
  private boolean responded;
  private boolean reusable = true;
  private boolean finished;
  /** The exchanges running for the client connection; this one is in it until it finishes. */
  private final ClientExchanges running;
  private boolean caching;
  private ChannelFuture unflushed; // the last client write not yet flushed, if any
  private boolean headOnly; // the unflushed writes are only the response head
  private boolean deferHead; // the head may wait for the first body bytes (a fixed-length body)
  // After a 101: the upgraded protocol's bytes that came before the byte relay took over (in the
  // 101's own read, say), in order; handed to the client first. Null otherwise. Upstream loop only.
  private List<ByteBuf> switched;

  UpstreamExchange(RequestInfo info, HttpMethod method, HttpStream stream, Channel inbound,
      boolean keepAlive, boolean upgrade, Pick<ApiServer> pick, ResponseTee tee, Ticker ticker,
      long startNanos, IntConsumer onResponse, RemoteProxy.Fallback fallback,
      ClientExchanges running) {
    this.info = info;
    this.method = method;
    this.stream = stream;
    this.inbound = inbound;
    this.keepAlive = keepAlive;
    this.upgrade = upgrade;
    this.pick = pick;
    this.tee = tee;
    this.ticker = ticker;
    this.startNanos = startNanos;
    this.onResponse = onResponse;
    this.fallback = fallback;
    this.running = running;
  }

  void send(FullHttpRequest request) {
    Channel upstream = stream.channel();
    running.add(this);
    // No promise and listener per request: a failed write reaches exceptionCaught below through
    // the connection's pipeline, and the answer cannot arrive before the request has left.
    upstream.writeAndFlush(request, upstream.voidPromise());
    upstream.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (switched != null && msg instanceof ByteBuf bytes) {
      // The HTTP codec passes on, raw, what follows a 101 (Netty's UPGRADED state).
      switched.add(bytes);
      return;
    }
    if (finished) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpResponse response && !(msg instanceof HttpContent)) {
      onHead(ctx, response);
      return;
    }
    if (msg instanceof HttpResponse response) { // a FullHttpResponse: head and body at once
      onHead(ctx, response);
    }
    if (msg instanceof HttpContent content) {
      onContent(ctx, content);
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  private void onHead(ChannelHandlerContext ctx, HttpResponse response) {
    int code = response.status().code();
    responded = true;
    onResponse.accept(code);
    if (upgrade && code == 101) {
      switchProtocols(ctx, response);
      return;
    }
    boolean hasBody = HttpFraming.hasBody(response, HttpProtocol.HTTP_1_1, method);
    boolean lengthSet = HttpFraming.isContentLengthSet(response);
    if (!lengthSet && !HttpFraming.isChunked(response) && hasBody) {
      reusable = false; // delimited by close
    }
    caching = tee != null && code / 100 == 2
        && tee.start(response.headers().get(HttpHeaderNames.CONTENT_TYPE),
            response.headers().get(HttpHeaderNames.CONTENT_ENCODING));
    // The decoded head is ours: relay it edited in place (a copy re-validated every header).
    HttpResponse out = response;
    out.setProtocolVersion(HttpVersion.HTTP_1_1);
    if (HopByHopHeaders.strip(out.headers(), HttpProtocol.HTTP_1_1)) {
      reusable = false;
    }
    HttpFraming.prepare(out, HttpProtocol.HTTP_1_1, hasBody);
    HttpUtil.setKeepAlive(out, keepAlive);
    if (response instanceof HttpContent) {
      return; // a full response: relayed as one message in onContent
    }
    headOnly = true;
    // A watch's head must reach the client before any event exists; a fixed-length body follows
    // its head at once.
    deferHead = hasBody && !info.isWatch() && lengthSet;
    if (deferHead) {
      // Flushed with (and waited for through) the body's write: no promise of its own. A failure
      // reaches the client pipeline's exceptionCaught, which closes the connection.
      inbound.write(out, inbound.voidPromise());
    } else {
      unflushed = inbound.write(out);
    }
  }

  private void onContent(ChannelHandlerContext ctx, HttpContent content) {
    if (caching) {
      tee.feed(content.content());
    }
    boolean last = content instanceof LastHttpContent;
    headOnly = false;
    if (!last) {
      unflushed = inbound.write(content); // ownership passes to the client channel
      return;
    }
    if (caching) {
      tee.finish();
    }
    // The full answer is with the client: end the lease now, close the client if it asked.
    unflushed = null;
    if (keepAlive) {
      // Nothing waits for this write: a failure reaches the client pipeline's exceptionCaught,
      // which closes the connection.
      inbound.writeAndFlush(content, inbound.voidPromise());
    } else {
      inbound.writeAndFlush(content).addListener(ChannelFutureListener.CLOSE);
    }
    pick.complete(Math.max(0, ticker.nanoTime() - startNanos));
    markFinished();
    stream.release(reusable);
  }

  /** One upstream read is relayed: flush it to the client, read more once the client took it. */
  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    ChannelFuture written = unflushed;
    if (!finished && headOnly && deferHead) {
      // A head whose fixed-length body is on its way: send both in one write, not two.
      headOnly = false;
      ctx.channel().read();
    } else if (written != null && !finished) {
      unflushed = null;
      inbound.flush();
      written.addListener(readMore(ctx));
    }
    ctx.fireChannelReadComplete();
  }

  private ChannelFutureListener readMore(ChannelHandlerContext ctx) {
    return f -> {
      if (f.isSuccess()) {
        ctx.channel().read();
      } else {
        ctx.channel().eventLoop().execute(() -> finish(false));
      }
    };
  }

  /** 101 Switching Protocols: answer the client, drop HTTP from both pipelines, relay bytes. */
  private void switchProtocols(ChannelHandlerContext ctx, HttpResponse response) {
    Channel upstream = ctx.channel();
    markFinished();
    pick.complete(Math.max(0, ticker.nanoTime() - startNanos));
    ReferenceCountUtil.release(response);
    DefaultFullHttpResponse out =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.SWITCHING_PROTOCOLS);
    out.headers().set(response.headers());
    inbound.config().setAutoRead(false);
    switched = new ArrayList<>();
    inbound.writeAndFlush(out).addListener(f -> {
      if (!f.isSuccess()) {
        upstream.eventLoop().execute(this::releaseSwitched);
        stream.abort();
        inbound.close();
        return;
      }
      inbound.eventLoop().execute(() -> {
        stripToTls(inbound.pipeline());
        upstream.eventLoop().execute(() -> {
          ChannelPipeline p = upstream.pipeline();
          if (p.get("http") != null) {
            p.remove("http"); // its buffered bytes, if any, come to channelRead: kept in order
          }
          for (ByteBuf early : switched) {
            inbound.write(early);
          }
          switched = null;
          inbound.flush();
          p.remove(this);
          upstream.closeFuture().addListener(c -> stream.abort());
          Relay.between(inbound, upstream);
          log.debug("{}: upgraded to {}, relaying bytes", info, response.headers().get("upgrade"));
        });
      });
    });
  }

  private void releaseSwitched() {
    if (switched != null) {
      switched.forEach(ReferenceCountUtil::release);
      switched = null;
    }
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseSwitched(); // the upstream closed before the relay took over
  }

  /** Removes every handler of the client pipeline except TLS. */
  private static void stripToTls(ChannelPipeline p) {
    List<String> names = new ArrayList<>();
    for (Map.Entry<String, ChannelHandler> e : p) {
      if (!(e.getValue() instanceof SslHandler)) {
        names.add(e.getKey());
      }
    }
    for (String n : names) {
      if (p.get(n) != null) {
        p.remove(n);
      }
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (!finished) {
      failed(new IOException("API server closed the connection"));
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (!finished) {
      failed(cause);
    } else {
      log.debug("{}: upstream error after the exchange", info, cause);
    }
  }

  private void failed(Throwable cause) {
    if (finished) {
      return;
    }
    if (!responded) {
      markFinished();
      pick.fail();
      stream.abort();
      if (tee != null) {
        tee.abort();
      }
      log.debug("{}: exchange with {} failed before an answer: {}", info, pick.target(),
          cause.toString());
      inbound.eventLoop().execute(() -> fallback.onUpstreamFailure(cause));
      return;
    }
    log.debug("{}: upstream broke off mid-response: {}", info, cause.toString());
    finish(false);
  }

  /** Ends an exchange that did not complete: both connections close. */
  private void finish(boolean ok) {
    if (finished) {
      return;
    }
    markFinished();
    if (tee != null) {
      tee.abort();
    }
    if (responded) {
      pick.fail();
    } else {
      pick.cancel();
    }
    stream.abort();
    inbound.close();
  }

  /** A client that went away (a watch cancelled) ends the exchange and its upstream connection. */
  void clientGone() {
    stream.channel().eventLoop().execute(() -> {
      if (!finished) {
        log.debug("{}: client went away; closing the upstream exchange", info);
        finish(false);
      }
    });
  }

  /**
   * Ends the exchange's claim on the client connection: a keep-alive client carries many exchanges
   * one after another, and one still referenced from the connection would keep its request, pooled
   * stream and tee reachable until the client disconnects.
   */
  private void markFinished() {
    finished = true;
    running.remove(this);
  }
}
