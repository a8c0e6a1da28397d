package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * HTTP/1.1 keep-alive connections to one origin: leased one exchange at a time, the most recently
 * used idle one first. Idle connections are kept per event loop and a lease only takes one
 * registered on the loop it asks for (opening a new one there otherwise), so a proxied exchange never
 * hops between threads: on a busy machine every hop is a context switch and a wake-up that can wait
 * a scheduler slice. At most {@code maxIdle} connections are kept idle over all loops. Each
 * connection's pipeline is fixed (codec + {@link ExchangeSlot}); idle connections keep a read
 * pending so a close by the origin is noticed at once; anything else they receive is a protocol
 * error that closes them. A connection that has carried {@code maxExchanges} exchanges is closed
 * after the last one (as nginx does upstream): a multi-process origin such as nginx deals
 * connections to its workers as they are accepted, and a pool that kept the ones it opened in one
 * burst for its whole life could leave one worker with most of the load. A new connection goes to
 * the worker that is free to accept it, so the load spreads out again. Thread-safe.
 *
 * <p>Each loop's idle connections are a stack only that loop touches: a lease or a release on the
 * caller's own loop takes no lock and allocates nothing but the lease's handle. The limit over all
 * loops is kept with permits: a loop keeps as many idle connections as it holds permits and takes
 * one more from the shared count only when it has to grow; it hands back the ones it does not use
 * when another loop ran short (on its next lease or release) and at every sweep.
 */
final class Http1OriginPool implements HttpClientPool.OriginPool {

  private final HttpClientPool owner;
  private final HttpClientPool.OriginKey key;
  private final InetSocketAddress origin;
  private final int maxExchanges; // per connection; 0: no limit
  private final AtomicInteger permits; // idle places no loop holds
  private volatile boolean starved; // a loop closed a reusable connection for want of a permit
  private volatile LoopIdle[] loops = new LoopIdle[0]; // copy-on-write; one per loop leased on
  private final Set<Channel> open = ConcurrentHashMap.newKeySet();
  private int connecting; // guarded by this: connections being made, not yet in the open set
  private boolean retired; // guarded by this: expiry found the pool empty; it opens nothing more

  Http1OriginPool(
      HttpClientPool owner, HttpClientPool.OriginKey key, int maxIdle, int maxExchanges) {
    this.owner = owner;
    this.key = key;
    this.origin = key.address();
    this.maxExchanges = maxExchanges;
    this.permits = new AtomicInteger(maxIdle);
  }

  @Override
  public HttpClientPool.OriginKey key() {
    return key;
  }

  @Override
  public HttpStream leaseIdle(EventLoop loop) {
    if (!loop.inEventLoop()) {
      return null; // another loop's stack is not ours to touch
    }
    LoopIdle idle = find(loop);
    if (idle == null) {
      return null;
    }
    while (idle.size > 0) {
      Connection c = idle.pop();
      if (c.channel.isActive()) {
        shareSurplus(idle);
        return c.lease(true);
      }
      // Closed, its close listener not run yet: it only has to leave the open set then.
    }
    return null;
  }

  @Override
  public CompletableFuture<HttpStream> acquire(EventLoop loop) {
    if (loop.inEventLoop()) {
      HttpStream s = leaseIdle(loop);
      if (s != null) {
        return CompletableFuture.completedFuture(s);
      }
      CompletableFuture<HttpStream> result = new CompletableFuture<>();
      return connect(loop, result) ? result : null;
    }
    // The loop's idle stack is touched only on the loop.
    CompletableFuture<HttpStream> result = new CompletableFuture<>();
    try {
      loop.execute(() -> acquireOnLoop(loop, result));
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  private void acquireOnLoop(EventLoop loop, CompletableFuture<HttpStream> result) {
    if (owner.isClosed()) {
      result.completeExceptionally(new IllegalStateException("HTTP client pool is closed"));
      return;
    }
    HttpStream s = leaseIdle(loop);
    if (s != null) {
      result.complete(s);
    } else if (!connect(loop, result)) {
      // Retired while the task waited: the owner finds or makes the origin's current pool.
      owner.acquire(origin, HttpProtocol.HTTP_1_1, loop).whenComplete((stream, error) -> {
        if (error != null) {
          result.completeExceptionally(error);
        } else {
          result.complete(stream);
        }
      });
    }
  }

  /** Opens a connection for {@code result}; false, nothing done, when the pool is retired. */
  private boolean connect(EventLoop loop, CompletableFuture<HttpStream> result) {
    synchronized (this) {
      if (retired) {
        return false;
      }
      connecting++;
    }
    try {
      open(loop, result);
    } finally {
      synchronized (this) {
        connecting--;
      }
    }
    return true;
  }

  private void open(EventLoop loop, CompletableFuture<HttpStream> result) {
    ExchangeSlot slot = new ExchangeSlot();
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
                    .addLast(HttpStream.HANDLER_NAME, slot);
              }
            });
    Channel ch = connect.channel();
    LoopIdle home = find(loop);
    if (home == null) {
      home = addLoop(loop);
    }
    Connection c = new Connection(ch, slot, home);
    open.add(ch);
    ch.closeFuture().addListener(c);
    connect.addListener(
        f -> {
          if (f.isSuccess()) {
            owner.debug("HTTP/1.1 connection {} to {} opened", ch.id(), origin);
            result.complete(c.lease(false));
          } else {
            ch.close();
            result.completeExceptionally(f.cause());
          }
        });
  }

  private LoopIdle find(EventLoop loop) {
    for (LoopIdle l : loops) {
      if (l.loop == loop) {
        return l;
      }
    }
    return null;
  }

  private synchronized LoopIdle addLoop(EventLoop loop) {
    LoopIdle l = find(loop);
    if (l == null) {
      l = new LoopIdle(loop);
      LoopIdle[] next = Arrays.copyOf(loops, loops.length + 1);
      next[next.length - 1] = l;
      loops = next;
    }
    return l;
  }

  /** Whether {@code idle} may keep one more connection; on its loop. */
  private boolean mayKeep(LoopIdle idle) {
    if (idle.size < idle.held) {
      return true;
    }
    for (int p = permits.get(); p > 0; p = permits.get()) {
      if (permits.compareAndSet(p, p - 1)) {
        idle.setHeld(idle.held + 1);
        return true;
      }
    }
    starved = true;
    return false;
  }

  /** Hands back the permits {@code idle} does not use when another loop ran short; on its loop. */
  private void shareSurplus(LoopIdle idle) {
    if (starved && idle.held > idle.size) {
      giveBack(idle);
      starved = false;
    }
  }

  private void giveBack(LoopIdle idle) {
    int surplus = idle.held - idle.size;
    if (surplus > 0) {
      idle.setHeld(idle.size);
      permits.addAndGet(surplus);
    }
  }

  /** On the connection's loop, once it closed: it leaves its loop's stack and the open set. */
  private void forget(Connection c) {
    if (c.idleAt >= 0) {
      c.home.remove(c);
    }
    shareSurplus(c.home);
    open.remove(c.channel); // last: whoever sees it gone sees the permits handed back
  }

  @Override
  public int idle() {
    int n = 0;
    for (LoopIdle l : loops) {
      n += l.sizeNow();
    }
    return n;
  }

  @Override
  public int open() {
    return open.size();
  }

  @Override
  public boolean expireIdle(long nowNanos, long idleTimeoutNanos) {
    for (LoopIdle l : loops) {
      if (l.sizeNow() > 0 || l.heldNow() > 0) {
        try {
          l.loop.execute(() -> expire(l, nowNanos, idleTimeoutNanos));
        } catch (RejectedExecutionException e) {
          // The loop is shutting down: its connections close with it.
        }
      }
    }
    synchronized (this) {
      // A connection being made is counted in connecting until it is in the open set.
      if (connecting == 0 && open.isEmpty() && idle() == 0) {
        retired = true;
      }
      return retired;
    }
  }

  /** Closes what idled too long on one loop and hands back its unused permits; on the loop. */
  private void expire(LoopIdle idle, long nowNanos, long idleTimeoutNanos) {
    for (int i = idle.size - 1; i >= 0; i--) {
      Connection c = idle.stack[i];
      if (nowNanos - c.idleSinceNanos >= idleTimeoutNanos) {
        idle.remove(c);
        c.channel.close();
      }
    }
    giveBack(idle);
  }

  @Override
  public void closeAll() {
    for (Channel ch : open) {
      ch.close();
    }
  }

  /** One pooled connection: its exchange slot, its loop's idle stack, its current lease. */
  private final class Connection extends OriginChannel implements ChannelFutureListener {
    final LoopIdle home;
    HttpStream lease; // on the loop; null while idle
    long idleSinceNanos; // on the loop
    int idleAt = -1; // on the loop: index in home's stack, -1 when not idle
    int exchanges; // on the loop: leases so far

    Connection(Channel channel, ExchangeSlot slot, LoopIdle home) {
      super(channel, HttpProtocol.HTTP_1_1, Http1OriginPool.this.origin, slot);
      this.home = home;
    }

    /** On the loop. Auto-read stays off: the lease's reader asks for reads itself. */
    HttpStream lease(boolean reused) {
      HttpStream s = new HttpStream(this, reused);
      lease = s;
      exchanges++;
      return s;
    }

    @Override
    void end(HttpStream stream, boolean reusable) {
      if (channel.eventLoop().inEventLoop()) {
        endOnLoop(stream, reusable); // the caller's own loop (a proxied exchange): no task
      } else {
        channel.eventLoop().execute(() -> endOnLoop(stream, reusable));
      }
    }

    private void endOnLoop(HttpStream stream, boolean reusable) {
      if (lease != stream) {
        return; // not the current lease: nothing of a later one may change
      }
      lease = null;
      if (slot.detach()) {
        ChannelPipeline p = channel.pipeline();
        if (p.context(HttpStream.READER_NAME) != null) {
          p.remove(HttpStream.READER_NAME);
        }
      }
      if (!reusable || owner.isClosed() || !channel.isActive()) {
        channel.close();
        return;
      }
      if (exchanges == maxExchanges) {
        owner.debug("HTTP/1.1 connection {} to {} closed after {} exchanges", channel.id(), origin,
            exchanges);
        channel.close();
        return;
      }
      if (!mayKeep(home)) {
        channel.close();
        return;
      }
      idleSinceNanos = owner.nanoTime();
      home.push(this);
      // While idle one read is kept pending so a close by the origin is seen at once.
      channel.read();
      shareSurplus(home);
    }

    /** The channel closed; on its loop. */
    @Override
    public void operationComplete(ChannelFuture f) {
      forget(this);
    }
  }

  /**
   * The idle connections registered on one event loop, most recently used on top, and the permits
   * the loop holds. Only the loop touches it; other threads read its counts for reporting.
   */
  private static final class LoopIdle {
    private static final VarHandle SIZE;
    private static final VarHandle HELD;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        SIZE = lookup.findVarHandle(LoopIdle.class, "size", int.class);
        HELD = lookup.findVarHandle(LoopIdle.class, "held", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final EventLoop loop;
    Connection[] stack = new Connection[8];
    int size; // written opaquely: read by other threads for reporting
    int held; // permits held, >= size; written opaquely as well

    LoopIdle(EventLoop loop) {
      this.loop = loop;
    }

    void push(Connection c) {
      if (size == stack.length) {
        stack = Arrays.copyOf(stack, size * 2);
      }
      c.idleAt = size;
      stack[size] = c;
      SIZE.setOpaque(this, size + 1);
    }

    Connection pop() {
      int top = size - 1;
      Connection c = stack[top];
      stack[top] = null;
      c.idleAt = -1;
      SIZE.setOpaque(this, top);
      return c;
    }

    /** Takes an idle connection out of the middle (closed or expired); keeps the order. */
    void remove(Connection c) {
      int i = c.idleAt;
      int above = size - i - 1;
      System.arraycopy(stack, i + 1, stack, i, above);
      for (int j = i; j < i + above; j++) {
        stack[j].idleAt = j;
      }
      stack[size - 1] = null;
      c.idleAt = -1;
      SIZE.setOpaque(this, size - 1);
    }

    void setHeld(int n) {
      HELD.setOpaque(this, n);
    }

    int sizeNow() {
      return (int) SIZE.getOpaque(this);
    }

    int heldNow() {
      return (int) HELD.getOpaque(this);
    }
  }
}
