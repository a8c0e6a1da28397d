package dev.portage.bench.balance;

import dev.portage.core.net.NettyTransport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An HTTP/1.1 backend that answers every request with a small 200 after a fixed service delay,
 * scheduled on its event loop (no thread is blocked, so a slow backend is slow only in latency, like
 * a backend waiting on its own dependency). The delay can be changed while it runs; thread-safe.
 */
final class DelayBackend implements AutoCloseable {

  private final String name;
  private final Channel listener;
  private final AtomicLong hits = new AtomicLong();
  private volatile long delayNanos;

  DelayBackend(EventLoopGroup group, String name, long delayNanos) {
    this.name = name;
    this.delayNanos = delayNanos;
    byte[] body = ("hello from " + name + "\n").getBytes(StandardCharsets.US_ASCII);
    listener = new ServerBootstrap()
        .group(group)
        .channel(NettyTransport.of(group).serverChannelType())
        .option(ChannelOption.SO_BACKLOG, 1024)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024),
                new SimpleChannelInboundHandler<FullHttpRequest>() {
                  @Override
                  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                    hits.incrementAndGet();
                    boolean keepAlive = HttpUtil.isKeepAlive(req);
                    ctx.executor().schedule(() -> reply(ctx, body, keepAlive),
                        DelayBackend.this.delayNanos, TimeUnit.NANOSECONDS);
                  }
                });
          }
        })
        .bind("127.0.0.1", 0)
        .syncUninterruptibly()
        .channel();
  }

  private static void reply(ChannelHandlerContext ctx, byte[] body, boolean keepAlive) {
    ByteBuf content = Unpooled.wrappedBuffer(body);
    FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
    resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
    HttpUtil.setContentLength(resp, body.length);
    HttpUtil.setKeepAlive(resp, keepAlive);
    var f = ctx.writeAndFlush(resp);
    if (!keepAlive) {
      f.addListener(io.netty.channel.ChannelFutureListener.CLOSE);
    }
  }

  String name() {
    return name;
  }

  int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  void delayNanos(long nanos) {
    delayNanos = nanos;
  }

  /** Requests received so far. */
  long hits() {
    return hits.get();
  }

  @Override
  public void close() {
    listener.close().syncUninterruptibly();
  }
}
