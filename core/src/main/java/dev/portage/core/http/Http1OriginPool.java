package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * HTTP/1.1 keep-alive connections to one origin: leased one exchange at a time, the most recently
 * used idle one first. Idle connections read with auto-read on so a close by the origin is noticed
 * at once; anything else they receive is a protocol error that closes them. Thread-safe.
 */
final class Http1OriginPool implements HttpClientPool.OriginPool {

  private static final String IDLE_GUARD = "portage-idle-guard";

  private final HttpClientPool owner;
  private final InetSocketAddress origin;
  private final int maxIdle;
  private final Object lock = new Object();
  private final ArrayDeque<IdleChannel> idle = new ArrayDeque<>(); // guarded by lock
  private final Set<Channel> open = ConcurrentHashMap.newKeySet();

  private record IdleChannel(Channel channel, long sinceNanos) {}

  Http1OriginPool(HttpClientPool owner, InetSocketAddress origin, int maxIdle) {
    this.owner = owner;
    this.origin = origin;
    this.maxIdle = maxIdle;
  }

  @Override
  public CompletableFuture<HttpStream> acquire(EventLoop loop) {
    while (true) {
      Channel ch;
      synchronized (lock) {
        IdleChannel i = idle.pollLast();
        if (i == null) {
          break;
        }
        ch = i.channel();
      }
      if (ch.isActive()) {
        return CompletableFuture.completedFuture(lease(ch));
      }
    }
    CompletableFuture<HttpStream> result = new CompletableFuture<>();
    ChannelFuture connect =
        owner.connect(
            origin,
            loop,
            new ChannelInitializer<>() {
              @Override
              protected void initChannel(Channel ch) {
                owner.addTls(ch, origin);
                ch.pipeline().addLast("http", new HttpClientCodec());
              }
            });
    Channel ch = connect.channel();
    open.add(ch);
    ch.closeFuture().addListener(f -> forget(ch));
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            owner.debug("HTTP/1.1 connection {} to {} opened", ch.id(), origin);
            result.complete(lease(ch));
          } else {
            ch.close();
            result.completeExceptionally(f.cause());
          }
        });
    return result;
  }

  private HttpStream lease(Channel ch) {
    ch.config().setAutoRead(false);
    if (ch.pipeline().get(IDLE_GUARD) != null) {
      ch.pipeline().remove(IDLE_GUARD);
    }
    return new HttpStream(ch, HttpProtocol.HTTP_1_1, origin, this::end);
  }

  private void end(HttpStream stream, boolean reusable) {
    Channel ch = stream.channel();
    ch.eventLoop()
        .execute(
            () -> {
              if (ch.pipeline().get(HttpStream.HANDLER_NAME) != null) {
                ch.pipeline().remove(HttpStream.HANDLER_NAME);
              }
              if (!reusable || owner.isClosed() || !ch.isActive()) {
                ch.close();
                return;
              }
              boolean kept;
              synchronized (lock) {
                kept = idle.size() < maxIdle;
                if (kept) {
                  idle.addLast(new IdleChannel(ch, owner.nanoTime()));
                }
              }
              if (!kept) {
                ch.close();
                return;
              }
              ch.pipeline().addLast(IDLE_GUARD, new IdleGuard());
              ch.config().setAutoRead(true);
            });
  }

  private void forget(Channel ch) {
    open.remove(ch);
    synchronized (lock) {
      idle.removeIf(i -> i.channel() == ch);
    }
  }

  @Override
  public int idle() {
    synchronized (lock) {
      return idle.size();
    }
  }

  @Override
  public int open() {
    return open.size();
  }

  @Override
  public boolean expireIdle(long nowNanos, long idleTimeoutNanos) {
    synchronized (lock) {
      for (Iterator<IdleChannel> it = idle.iterator(); it.hasNext(); ) {
        IdleChannel i = it.next();
        if (nowNanos - i.sinceNanos() >= idleTimeoutNanos) {
          it.remove();
          i.channel().close();
        }
      }
      return idle.isEmpty() && open.isEmpty();
    }
  }

  @Override
  public void closeAll() {
    for (Channel ch : open) {
      ch.close();
    }
  }

  /** Closes an idle connection that receives anything: an origin must not speak unasked. */
  private static final class IdleGuard extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
