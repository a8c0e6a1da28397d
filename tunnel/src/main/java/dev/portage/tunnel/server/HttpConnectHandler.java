package dev.portage.tunnel.server;

import dev.portage.core.net.ConnectionLimit;
import dev.portage.core.time.TimeSource;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one HTTP/1.1 request head within the header timeout (counted from the accept, so a TLS
 * handshake counts too): {@code CONNECT host:port} hands the socket to an {@link HttpConnectFrontend}
 * (the HTTP codec is removed and the socket carries raw bytes from then on); any other method gets 405.
 * The socket counts as sending its head (its {@code head} admission) until the head is read or the
 * socket refused. One instance per channel; runs on its event loop.
 */
final class HttpConnectHandler extends ChannelInboundHandlerAdapter {
  static final String CODEC = "http-codec";
  static final String NOT_CONNECT = "this proxy only supports CONNECT passthrough";
  private static final Logger log = LoggerFactory.getLogger(HttpConnectHandler.class);

  private final HttpConnectFrontend.Factory frontends;
  private final TimeSource time;
  private final Duration headerTimeout;
  private final ConnectionLimit.Admission head;
  private ScheduledFuture<?> headerTimer;
  private boolean done;

  HttpConnectHandler(
      HttpConnectFrontend.Factory frontends, TimeSource time, Duration headerTimeout, ConnectionLimit.Admission head) {
    this.frontends = frontends;
    this.time = time;
    this.headerTimeout = headerTimeout;
    this.head = head;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    headerTimer = time.scheduler().schedule(() -> ctx.executor().execute(() -> {
      if (!done) {
        log.debug("{}: no request head within {}; closing", ctx.channel(), headerTimeout);
        done = true;
        ctx.close();
      }
    }), headerTimeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    headerTimer.cancel(false);
    head.release();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof HttpRequest req) || done) {
      // Request bodies and anything after a refusal are dropped.
      ReferenceCountUtil.release(msg);
      return;
    }
    try {
      done = true;
      headerTimer.cancel(false);
      head.release();
      if (req.decoderResult().isFailure()) {
        refuse(ctx, 400, "malformed HTTP request: " + req.decoderResult().cause().getMessage());
        return;
      }
      if (!HttpMethod.CONNECT.equals(req.method())) {
        refuse(ctx, 405, NOT_CONNECT);
        return;
      }
      String target = req.uri();
      if (target == null || target.isEmpty() || target.startsWith("/")) {
        target = req.headers().get(HttpHeaderNames.HOST, "");
      }
      if (target.isEmpty()) {
        refuse(ctx, 400, "CONNECT without a target host:port");
        return;
      }
      long random;
      do {
        random = ThreadLocalRandom.current().nextLong();
      } while (random == 0);
      HttpConnectFrontend frontend = frontends.create(ctx.channel(), target, random);
      // Raw bytes from here on: the frontend is added first so bytes the codec already buffered
      // (sent right behind the request head) reach it when the codec is removed.
      ctx.channel().config().setAutoRead(false);
      ctx.pipeline().addAfter(ctx.name(), "connect-tunnel", frontend);
      ctx.pipeline().remove(this);
      ctx.pipeline().remove(HttpServerCodec.class);
      frontend.dial();
    } finally {
      ReferenceCountUtil.release(req);
    }
  }

  private static void refuse(ChannelHandlerContext ctx, int status, String body) {
    ctx.pipeline().remove(HttpServerCodec.class);
    ctx.channel().config().setOption(ChannelOption.AUTO_READ, false);
    ctx.writeAndFlush(HttpStatusResponse.error(ctx.alloc(), status, body)).addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("{}: HTTP CONNECT head failed", ctx.channel(), cause);
    ctx.close();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      ctx.close(); // EOF before a complete request head
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }
}
