package dev.portage.core.http;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client connections to HTTP origins, pooled per origin address and protocol: HTTP/1.1 keep-alive
 * connections (one exchange at a time each, leased only to callers on the event loop they are
 * registered on; at most {@code maxIdlePerOrigin} kept idle, each closed after {@code idleTimeout}
 * unused or after {@code maxExchangesPerConnection} exchanges) and one multiplexed h2c connection per origin (replaced when it closes or goes away,
 * closed after {@code idleTimeout} without streams). Every connection has {@code TCP_NODELAY} set.
 * Idle expiry is started by the injected scheduler; HTTP/1.1 connections expire on their own event
 * loop. Thread-safe.
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>option</th><th>default</th></tr>
 *   <tr><td>maxIdlePerOrigin</td><td>256 (over all event loops)</td></tr>
 *   <tr><td>idleTimeout</td><td>60 s</td></tr>
 *   <tr><td>maxExchangesPerConnection</td><td>1,000 (nginx's upstream default)</td></tr>
 *   <tr><td>connectTimeout</td><td>5 s</td></tr>
 * </table>
 */
public final class HttpClientPool implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HttpClientPool.class);

  private final EventLoopGroup group;
  private final TimeSource time;
  private final int maxIdlePerOrigin;
  private final int maxExchangesPerConnection;
  private final long idleTimeoutNanos;
  private final int connectTimeoutMillis;
  private final SslContext sslContext; // null: cleartext
  private final Map<OriginKey, OriginPool> origins = new ConcurrentHashMap<>();
  private volatile Recent[] recent = new Recent[0]; // origins leased lately, by address identity
  private final ScheduledFuture<?> sweeper;
  private volatile boolean closed;

  record OriginKey(InetSocketAddress address, HttpProtocol protocol) {}

  /**
   * An origin's pool, found by the identity of the address a caller passes again and again (a
   * balancer's endpoint): no key to make and no hash map probe per lease.
   */
  private record Recent(InetSocketAddress address, HttpProtocol protocol, OriginPool pool) {}

  /** Origins remembered in {@link #recent}; more are found in the map. */
  private static final int RECENT = 8;

  private HttpClientPool(Builder b) {
    this.group = b.group;
    this.time = b.time;
    this.maxIdlePerOrigin = b.maxIdlePerOrigin;
    this.maxExchangesPerConnection = b.maxExchangesPerConnection;
    this.idleTimeoutNanos = b.idleTimeout.toNanos();
    this.connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, b.connectTimeout.toMillis());
    this.sslContext = b.sslContext;
    long period = Math.max(1, idleTimeoutNanos / 2);
    this.sweeper =
        time.scheduler().scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.NANOSECONDS);
  }

  /**
   * A builder of a pool whose connections run on {@code group} (the caller's; not shut down by the
   * pool) and whose idle expiry runs on {@code time}.
   */
  public static Builder builder(EventLoopGroup group, TimeSource time) {
    return new Builder(group, time);
  }

  /**
   * Leases a stream to {@code origin}: an idle HTTP/1.1 connection registered on {@code loop}, a new
   * one registered there, or a new stream on the origin's h2c connection. Pass the caller's event
   * loop: both sides of a proxied exchange then run on one thread, without a hop per message.
   * {@link HttpStream#isReused()} tells a stream on an earlier connection from a new one.
   *
   * @return completes with the stream, or exceptionally with the connect or stream-open failure
   */
  public CompletableFuture<HttpStream> acquire(
      InetSocketAddress origin, HttpProtocol protocol, EventLoop loop) {
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(protocol, "protocol");
    Objects.requireNonNull(loop, "loop");
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("HTTP client pool is closed"));
    }
    for (;;) {
      OriginPool pool = pool(origin, protocol, true);
      CompletableFuture<HttpStream> stream = pool.acquire(loop);
      if (stream != null) {
        return stream;
      }
      drop(pool); // retired by a sweep after we found it: the next lookup makes a fresh one
    }
  }

  /**
   * Leases an idle HTTP/1.1 connection to {@code origin} registered on {@code loop} at once, or
   * returns null: when there is none, when the caller is not on {@code loop}, for h2c, or when the
   * pool is closed. The cheap path of a proxied exchange on its own loop (no future, no task); call
   * {@link #acquire} when it returns null.
   */
  public HttpStream leaseIdle(InetSocketAddress origin, HttpProtocol protocol, EventLoop loop) {
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(protocol, "protocol");
    Objects.requireNonNull(loop, "loop");
    if (closed || protocol != HttpProtocol.HTTP_1_1) {
      return null;
    }
    OriginPool pool = pool(origin, protocol, false);
    return pool == null ? null : pool.leaseIdle(loop);
  }

  /** The origin's pool, made when {@code create} (else null when there is none). */
  private OriginPool pool(InetSocketAddress origin, HttpProtocol protocol, boolean create) {
    for (Recent r : recent) {
      if (r.address == origin && r.protocol == protocol) {
        return r.pool;
      }
    }
    OriginKey key = new OriginKey(origin, protocol);
    OriginPool pool = origins.get(key); // no capturing lambda per request when the pool exists
    if (pool == null) {
      if (!create) {
        return null;
      }
      pool =
          origins.computeIfAbsent(
              key,
              k ->
                  protocol == HttpProtocol.HTTP_1_1
                      ? new Http1OriginPool(this, k, maxIdlePerOrigin, maxExchangesPerConnection)
                      : new H2OriginPool(this, k));
    }
    if (!remembered(key)) {
      remember(key, pool);
    }
    return pool;
  }

  /** Whether an address equal to the key's is remembered (a caller that makes a new one each time). */
  private boolean remembered(OriginKey key) {
    for (Recent r : recent) {
      if (r.protocol == key.protocol() && r.address.equals(key.address())) {
        return true;
      }
    }
    return false;
  }

  private synchronized void remember(OriginKey key, OriginPool pool) {
    if (origins.get(key) != pool) {
      return; // swept meanwhile: its removal has already forgotten the recent ones (same lock)
    }
    Recent[] old = recent;
    Recent[] next = old.length < RECENT ? Arrays.copyOf(old, old.length + 1) : old.clone();
    // The oldest goes when full: entries move down one and the newest takes the last slot.
    if (old.length >= RECENT) {
      System.arraycopy(old, 1, next, 0, RECENT - 1);
    }
    next[next.length - 1] = new Recent(key.address(), key.protocol(), pool);
    recent = next;
  }

  /** Forgets the remembered origins (one of them left the map); leases find them in the map. */
  private synchronized void forgetRecent() {
    recent = new Recent[0];
  }

  /** HTTP/1.1 connections idle in the pool, over every origin. */
  public int idleConnections() {
    return origins.values().stream().mapToInt(OriginPool::idle).sum();
  }

  /** Open client connections (HTTP/1.1 leased or idle, h2c), over every origin. */
  public int openConnections() {
    return origins.values().stream().mapToInt(OriginPool::open).sum();
  }

  /** Origins that currently hold a pool entry; emptied by idle expiry. */
  public int origins() {
    return origins.size();
  }

  /** Runs idle expiry now (also run periodically on the scheduler). */
  public void sweep() {
    long now = time.ticker().nanoTime();
    for (OriginPool p : origins.values()) {
      if (p.expireIdle(now, idleTimeoutNanos)) {
        drop(p);
      }
    }
  }

  /** Removes a retired pool from the map and the remembered origins, if still there. Idempotent. */
  private void drop(OriginPool pool) {
    if (origins.remove(pool.key(), pool)) {
      forgetRecent();
    }
  }

  /** Closes every pooled connection; leased HTTP/1.1 connections close too. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    sweeper.cancel(false);
    for (OriginPool p : origins.values()) {
      p.closeAll();
    }
    origins.clear();
    forgetRecent();
  }

  long nanoTime() {
    return time.ticker().nanoTime();
  }

  boolean isClosed() {
    return closed;
  }

  ChannelFuture connect(InetSocketAddress origin, EventLoop loop, ChannelInitializer<Channel> init) {
    NettyTransport transport = NettyTransport.of(group);
    return new Bootstrap()
        .group(loop)
        .channel(transport.channelType())
        .option(ChannelOption.ALLOCATOR, transport.allocator())
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.AUTO_READ, false)
        .handler(init)
        .connect(origin);
  }

  /** Adds the TLS handler to a new HTTP/1.1 connection when the pool was built with TLS. */
  void addTls(Channel ch, InetSocketAddress origin) {
    if (sslContext != null) {
      ch.pipeline()
          .addLast("tls", sslContext.newHandler(ch.alloc(), origin.getHostString(), origin.getPort()));
    }
  }

  void debug(String format, Object... args) {
    log.debug(format, args);
  }

  /**
   * The connections to one origin. Once {@link #expireIdle} has returned true the pool is retired:
   * it opens nothing more, so no connection can be made in a pool that has left the map (where
   * {@link #close} and the sweeps would never reach it).
   */
  interface OriginPool {
    OriginKey key();

    /** A lease as {@link HttpClientPool#acquire} describes; null when the pool is retired. */
    CompletableFuture<HttpStream> acquire(EventLoop loop);

    /** An idle connection on {@code loop} leased now, or null; the caller must be on the loop. */
    HttpStream leaseIdle(EventLoop loop);

    int idle();

    int open();

    /**
     * Closes what idled too long; returns true, and retires the pool, when nothing is left (the
     * entry must go).
     */
    boolean expireIdle(long nowNanos, long idleTimeoutNanos);

    void closeAll();
  }

  /** Options of an {@link HttpClientPool}; not thread-safe. */
  public static final class Builder {
    private final EventLoopGroup group;
    private final TimeSource time;
    private int maxIdlePerOrigin = 256;
    private int maxExchangesPerConnection = 1_000;
    private Duration idleTimeout = Duration.ofSeconds(60);
    private Duration connectTimeout = Duration.ofSeconds(5);
    private SslContext sslContext;

    private Builder(EventLoopGroup group, TimeSource time) {
      this.group = Objects.requireNonNull(group, "group");
      NettyTransport.of(group);
      this.time = Objects.requireNonNull(time, "time");
    }

    /**
     * Idle HTTP/1.1 connections kept per origin over all event loops ({@code >= 0}); extra ones are
     * closed. Below the number of concurrent exchanges a busy origin sees, connections are closed
     * and reopened all the time.
     */
    public Builder maxIdlePerOrigin(int max) {
      if (max < 0) {
        throw new IllegalArgumentException("maxIdlePerOrigin: " + max + " (expected: >= 0)");
      }
      this.maxIdlePerOrigin = max;
      return this;
    }

    /**
     * Exchanges an HTTP/1.1 connection carries before it is closed ({@code >= 0}; 0: no limit). A
     * multi-process origin (nginx with a worker per core) hands each new connection to whichever
     * worker accepts it; a pool that never replaced its connections could keep most of them on one
     * worker for good, and that worker then sets the pace. Replacing one now and then lets the
     * origin spread them again, at one connect per this many exchanges.
     */
    public Builder maxExchangesPerConnection(int max) {
      if (max < 0) {
        throw new IllegalArgumentException(
            "maxExchangesPerConnection: " + max + " (expected: >= 0)");
      }
      this.maxExchangesPerConnection = max;
      return this;
    }

    /** How long a connection may stay unused before it is closed ({@code > 0}). */
    public Builder idleTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("idleTimeout: " + timeout + " (expected: > 0)");
      }
      this.idleTimeout = timeout;
      return this;
    }

    /** TCP connect timeout ({@code > 0}); enforced by Netty on the connection's event loop. */
    public Builder connectTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("connectTimeout: " + timeout + " (expected: > 0)");
      }
      this.connectTimeout = timeout;
      return this;
    }

    /**
     * Speaks TLS with this client context on every HTTP/1.1 connection (SNI and, with Netty's
     * default, hostname verification use the origin's host string); default cleartext. h2c stays
     * cleartext by definition.
     */
    public Builder sslContext(SslContext context) {
      Objects.requireNonNull(context, "context");
      if (!context.isClient()) {
        throw new IllegalArgumentException("sslContext: a server context (expected: a client one)");
      }
      this.sslContext = context;
      return this;
    }

    public HttpClientPool build() {
      return new HttpClientPool(this);
    }
  }
}
