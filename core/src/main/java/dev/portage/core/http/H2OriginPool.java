package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * The one h2c connection to an origin, shared by every request: each lease opens a stream on it. A
 * connection that closed or received GOAWAY is replaced on the next lease; streams already open on
 * it run to their end. Thread-safe.
 */
final class H2OriginPool implements HttpClientPool.OriginPool {

  private final HttpClientPool owner;
  private final HttpClientPool.OriginKey key;
  private final InetSocketAddress origin;
  private CompletableFuture<Channel> connection; // guarded by this
  private boolean goingAway; // guarded by this
  private int activeStreams; // guarded by this
  private long idleSinceNanos; // guarded by this
  private int open; // guarded by this: connections not closed yet, current and draining
  private boolean retired; // guarded by this: expiry found the pool empty; it opens nothing more

  H2OriginPool(HttpClientPool owner, HttpClientPool.OriginKey key) {
    this.owner = owner;
    this.key = key;
    this.origin = key.address();
    this.idleSinceNanos = owner.nanoTime();
  }

  @Override
  public HttpClientPool.OriginKey key() {
    return key;
  }

  @Override
  public CompletableFuture<HttpStream> acquire(EventLoop loop) {
    CompletableFuture<Channel> conn;
    boolean reused = false;
    synchronized (this) {
      if (retired) {
        return null;
      }
      boolean replace =
          connection == null
          || goingAway
          || (connection.isDone()
              && (connection.isCompletedExceptionally() || !connection.join().isActive()));
      if (replace) {
        connection = connect(loop);
        goingAway = false;
      } else {
        // A stream on a connection that was already up (not one still connecting).
        reused = connection.isDone();
      }
      conn = connection;
      activeStreams++;
    }
    CompletableFuture<HttpStream> result = new CompletableFuture<>();
    boolean onEstablished = reused;
    conn.whenComplete(
        (parent, error) -> {
          if (error != null) {
            streamEnded();
            result.completeExceptionally(error);
            return;
          }
          new Http2StreamChannelBootstrap(parent)
              .option(ChannelOption.AUTO_READ, false)
              .handler(new Http2StreamFrameToHttpObjectCodec(false))
              .open()
              .addListener(
                  f -> {
                    if (!f.isSuccess()) {
                      streamEnded();
                      result.completeExceptionally(f.cause());
                      return;
                    }
                    Http2StreamChannel stream = (Http2StreamChannel) f.getNow();
                    stream.closeFuture().addListener(c -> streamEnded());
                    result.complete(new HttpStream(new Stream(stream, origin), onEstablished));
                  });
        });
    return result;
  }

  private CompletableFuture<Channel> connect(EventLoop loop) {
    CompletableFuture<Channel> result = new CompletableFuture<>();
    ChannelFuture connect =
        owner.connect(
            origin,
            loop,
            new ChannelInitializer<>() {
              @Override
              protected void initChannel(Channel ch) {
                ch.pipeline()
                    .addLast(
                        Http2FrameCodecBuilder.forClient()
                            .initialSettings(Http2Settings.defaultSettings().pushEnabled(false))
                            .build())
                    .addLast(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()))
                    .addLast(new GoAwayWatcher(result));
              }
            });
    Channel ch = connect.channel();
    synchronized (this) {
      open++;
    }
    ch.closeFuture()
        .addListener(
            f -> {
              synchronized (this) {
                open--;
              }
              owner.debug("h2c connection {} to {} closed", ch.id(), origin);
            });
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            // Frames of every stream share the connection: it must always read. Each stream's
            // flow-control window is what holds a slow reader's data back.
            ch.config().setAutoRead(true);
            ch.read();
            owner.debug("h2c connection {} to {} opened", ch.id(), origin);
            result.complete(ch);
          } else {
            ch.close();
            result.completeExceptionally(f.cause());
          }
        });
    return result;
  }

  private synchronized void streamEnded() {
    activeStreams--;
    if (activeStreams == 0) {
      idleSinceNanos = owner.nanoTime();
    }
  }

  private synchronized void goAway(CompletableFuture<Channel> conn) {
    if (connection == conn) {
      goingAway = true;
    }
  }

  @Override
  public HttpStream leaseIdle(EventLoop loop) {
    return null; // every lease opens a stream
  }

  @Override
  public int idle() {
    return 0;
  }

  @Override
  public synchronized int open() {
    return open;
  }

  @Override
  public boolean expireIdle(long nowNanos, long idleTimeoutNanos) {
    Channel toClose = null;
    boolean empty;
    synchronized (this) {
      if (activeStreams == 0 && nowNanos - idleSinceNanos >= idleTimeoutNanos && connection != null) {
        if (connection.isDone() && !connection.isCompletedExceptionally()) {
          toClose = connection.join();
        }
        connection = null;
      }
      empty = connection == null && activeStreams == 0;
      retired |= empty;
    }
    if (toClose != null) {
      toClose.close();
    }
    return empty;
  }

  @Override
  public void closeAll() {
    CompletableFuture<Channel> conn;
    synchronized (this) {
      conn = connection;
      connection = null;
    }
    if (conn != null) {
      conn.thenAccept(Channel::close);
    }
  }

  /** One HTTP/2 stream, closed when its lease ends. */
  private static final class Stream extends OriginChannel {
    Stream(Http2StreamChannel stream, InetSocketAddress origin) {
      super(stream, HttpProtocol.H2C, origin, null);
    }

    @Override
    void end(HttpStream lease, boolean reusable) {
      channel.close();
    }
  }

  /** Marks the connection as going away so the next lease opens a new one. */
  private final class GoAwayWatcher extends ChannelInboundHandlerAdapter {
    private final CompletableFuture<Channel> conn;

    GoAwayWatcher(CompletableFuture<Channel> conn) {
      this.conn = conn;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Http2GoAwayFrame) {
        goAway(conn);
      }
      ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      goAway(conn);
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      owner.debug("h2c connection {} to {} failed: {}", ctx.channel().id(), origin, cause.toString());
      ctx.close();
    }
  }
}
