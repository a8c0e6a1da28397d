package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * HTTP/1.1 keep-alive connections to one origin: leased one exchange at a time, the most recently
 * used idle one first. Idle connections are kept per event loop and a lease only takes one
 * registered on the loop it asks for (opening a new one there otherwise), so a proxied exchange never
 * hops between threads: on a busy machine every hop is a context switch and a wake-up that can wait
 * a scheduler slice. At most {@code maxIdle} connections are kept idle over all loops. Each
 * connection's pipeline is fixed (codec + {@link ExchangeSlot}); idle connections keep a read
 * pending so a close by the origin is noticed at once; anything else they receive is a protocol
 * error that closes them. Thread-safe.
 */
final class Http1OriginPool implements HttpClientPool.OriginPool {

  private final HttpClientPool owner;
  private final InetSocketAddress origin;
  private final int maxIdle;
  private final Object lock = new Object();
  private final Map<EventLoop, ArrayDeque<IdleChannel>> idle = new HashMap<>(); // guarded by lock
  private int idleCount; // guarded by lock
  private final Set<Channel> open = ConcurrentHashMap.newKeySet();
  private final HttpStream.Releaser releaser = this::end; // one, not one per lease

  private record IdleChannel(Channel channel, long sinceNanos) {}

  Http1OriginPool(HttpClientPool owner, InetSocketAddress origin, int maxIdle) {
    this.owner = owner;
    this.origin = origin;
    this.maxIdle = maxIdle;
  }

  @Override
  public CompletableFuture<HttpStream> acquire(EventLoop loop) {
    while (true) {
      Channel ch = pollIdle(loop);
      if (ch == null) {
        break;
      }
      if (ch.isActive()) {
        return CompletableFuture.completedFuture(lease(ch, true));
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
                ch.pipeline()
                    .addLast("http", new OriginHttpCodec())
                    .addLast(HttpStream.HANDLER_NAME, new ExchangeSlot());
              }
            });
    Channel ch = connect.channel();
    open.add(ch);
    ch.closeFuture().addListener(f -> forget(ch));
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            owner.debug("HTTP/1.1 connection {} to {} opened", ch.id(), origin);
            result.complete(lease(ch, false));
          } else {
            ch.close();
            result.completeExceptionally(f.cause());
          }
        });
    return result;
  }

  private Channel pollIdle(EventLoop loop) {
    synchronized (lock) {
      ArrayDeque<IdleChannel> q = idle.get(loop);
      IdleChannel i = q == null ? null : q.pollLast();
      if (i == null) {
        return null;
      }
      idleCount--;
      return i.channel();
    }
  }

  private HttpStream lease(Channel ch, boolean reused) {
    // Auto-read stays off for the connection's life: while idle one read is kept pending so a
    // close by the origin is seen at once; the lease's reader asks for more itself.
    return new HttpStream(
        ch, HttpProtocol.HTTP_1_1, origin, reused, releaser, ch.pipeline().get(ExchangeSlot.class));
  }

  private void end(HttpStream stream, boolean reusable) {
    Channel ch = stream.channel();
    LoopExecutor.run(ch.eventLoop(), () -> {
      stream.detach();
      if (!reusable || owner.isClosed() || !ch.isActive()) {
        ch.close();
        return;
      }
      boolean kept;
      synchronized (lock) {
        kept = idleCount < maxIdle;
        if (kept) {
          idle.computeIfAbsent(ch.eventLoop(), l -> new ArrayDeque<>())
              .addLast(new IdleChannel(ch, owner.nanoTime()));
          idleCount++;
        }
      }
      if (!kept) {
        ch.close();
        return;
      }
      ch.read();
    });
  }

  private void forget(Channel ch) {
    open.remove(ch);
    synchronized (lock) {
      ArrayDeque<IdleChannel> q = idle.get(ch.eventLoop());
      if (q != null && q.removeIf(i -> i.channel() == ch)) {
        idleCount--;
      }
    }
  }

  @Override
  public int idle() {
    synchronized (lock) {
      return idleCount;
    }
  }

  @Override
  public int open() {
    return open.size();
  }

  @Override
  public boolean expireIdle(long nowNanos, long idleTimeoutNanos) {
    synchronized (lock) {
      for (Iterator<ArrayDeque<IdleChannel>> qs = idle.values().iterator(); qs.hasNext(); ) {
        ArrayDeque<IdleChannel> q = qs.next();
        for (Iterator<IdleChannel> it = q.iterator(); it.hasNext(); ) {
          IdleChannel i = it.next();
          if (nowNanos - i.sinceNanos() >= idleTimeoutNanos) {
            it.remove();
            idleCount--;
            i.channel().close();
          }
        }
        if (q.isEmpty()) {
          qs.remove();
        }
      }
      return idleCount == 0 && open.isEmpty();
    }
  }

  @Override
  public void closeAll() {
    for (Channel ch : open) {
      ch.close();
    }
  }
}
