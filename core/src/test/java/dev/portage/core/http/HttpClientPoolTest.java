package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.FakeClock;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP/1.1 side of {@link HttpClientPool} against a real origin on 127.0.0.1. */
class HttpClientPoolTest {

  private final FakeClock clock = new FakeClock();
  private final ExecutorService originThreads = Executors.newCachedThreadPool();
  private HttpServer origin;
  private InetSocketAddress address;
  private EventLoopGroup group;
  private EventLoop loopA;
  private EventLoop loopB;
  private HttpClientPool pool;

  @BeforeEach
  void start() throws Exception {
    origin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    origin.setExecutor(originThreads);
    origin.createContext("/", ex -> {
      byte[] body = ("hello " + ex.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    origin.start();
    address = new InetSocketAddress("127.0.0.1", origin.getAddress().getPort());
    group = NettyTransport.best().newEventLoopGroup(2, "pool-test");
    loopA = group.next();
    loopB = group.next();
    assertThat(loopA).isNotSameAs(loopB);
    pool = HttpClientPool.builder(group, clock.timeSource()).build();
  }

  @AfterEach
  void stop() {
    pool.close();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    origin.stop(0);
    originThreads.shutdownNow();
  }

  @Test
  void leaseOnTheSameLoopReusesTheIdleConnection() throws Exception {
    HttpStream first = acquire(loopA);
    assertThat(first.isReused()).isFalse();
    assertThat(exchange(first, "/one")).isEqualTo("hello /one");
    first.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

    HttpStream second = acquire(loopA);
    assertThat(second.isReused()).isTrue();
    assertThat(second.channel()).isSameAs(first.channel());
    assertThat(exchange(second, "/two")).isEqualTo("hello /two");
    second.release();
    assertThat(pool.openConnections()).isEqualTo(1);
  }

  @Test
  void leaseOnAnotherLoopOpensAConnectionOnThatLoop() throws Exception {
    HttpStream onA = acquire(loopA);
    assertThat(exchange(onA, "/a")).isEqualTo("hello /a");
    onA.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

    // The idle connection belongs to loop A: a caller on loop B gets its own, never a hop to A.
    HttpStream onB = acquire(loopB);
    assertThat(onB.isReused()).isFalse();
    assertThat(onB.channel()).isNotSameAs(onA.channel());
    assertThat(onB.channel().eventLoop()).isSameAs(loopB);
    assertThat(exchange(onB, "/b")).isEqualTo("hello /b");
    onB.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 2);
    assertThat(pool.openConnections()).isEqualTo(2);
  }

  @Test
  void pooledConnectionKeepsOnePipelineAcrossExchanges() throws Exception {
    HttpStream first = acquire(loopA);
    List<String> names = first.channel().pipeline().names();
    Object slot = first.channel().pipeline().get(HttpStream.HANDLER_NAME);
    assertThat(slot).isInstanceOf(ExchangeSlot.class);
    assertThat(exchange(first, "/one")).isEqualTo("hello /one");
    first.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

    HttpStream second = acquire(loopA);
    assertThat(second.channel()).isSameAs(first.channel());
    assertThat(exchange(second, "/two", true)).isEqualTo("hello /two");
    // The reader was handed to the permanent handler, not added to the pipeline.
    assertThat(second.channel().pipeline().names()).isEqualTo(names);
    assertThat(second.channel().pipeline().get(HttpStream.HANDLER_NAME)).isSameAs(slot);
    second.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

    // A reader added to the pipeline (attach) is removed when the lease ends.
    HttpStream third = acquire(loopA);
    assertThat(exchange(third, "/three")).isEqualTo("hello /three");
    assertThat(third.channel().pipeline().get(HttpStream.READER_NAME)).isNotNull();
    third.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    assertThat(third.channel().pipeline().names()).isEqualTo(names);
  }

  @Test
  void idleConnectionClosedByTheOriginLeavesThePool() throws Exception {
    CountDownLatch closeNow = new CountDownLatch(1);
    try (ServerSocket raw = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread origin = Thread.ofPlatform().daemon().start(() -> {
        try (Socket s = raw.accept()) {
          InputStream in = s.getInputStream();
          int matched = 0;
          int c;
          while (matched < 4 && (c = in.read()) >= 0) {
            matched = c == "\r\n\r\n".charAt(matched) ? matched + 1 : (c == '\r' ? 1 : 0);
          }
          s.getOutputStream().write(
              "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nhello /x".getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          closeNow.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
          // the test fails on its own assertions
        }
      });
      InetSocketAddress rawAddress = new InetSocketAddress("127.0.0.1", raw.getLocalPort());
      HttpStream s = pool.acquire(rawAddress, HttpProtocol.HTTP_1_1, loopA).get(10, TimeUnit.SECONDS);
      assertThat(exchange(s, "/x")).isEqualTo("hello /x");
      s.release();
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

      // Idle connections keep a read pending: the origin's close is noticed without a lease.
      closeNow.countDown();
      await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 0);
      assertThat(pool.idleConnections()).isZero();
      origin.join(10_000);
    }
  }

  @Test
  void connectionsHaveNagleOff() throws Exception {
    HttpStream s = acquire(loopA);
    // Nagle + delayed ACK would hold a small request head back for up to ~40 ms.
    assertThat(s.channel().config().getOption(ChannelOption.TCP_NODELAY)).isTrue();
    s.abort();
  }

  @Test
  void connectionsTakeTheirTransportsBufferAllocator() throws Exception {
    HttpStream s = acquire(loopA);
    // On NIO the pooled one, whose buffers keep their ByteBuffer view across socket reads and writes.
    assertThat(s.channel().alloc()).isSameAs(NettyTransport.of(group).allocator());
    s.abort();
  }

  @Test
  void idleConnectionsAboveTheLimitAreClosed() throws Exception {
    pool.close();
    pool = HttpClientPool.builder(group, clock.timeSource()).maxIdlePerOrigin(1).build();
    HttpStream a = acquire(loopA);
    HttpStream b = acquire(loopA);
    assertThat(exchange(a, "/a")).isEqualTo("hello /a");
    assertThat(exchange(b, "/b")).isEqualTo("hello /b");
    a.release();
    b.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 1);
    assertThat(pool.idleConnections()).isEqualTo(1);
  }

  @Test
  void aConnectionIsReplacedAfterItsLastAllowedExchange() throws Exception {
    pool.close();
    pool = HttpClientPool.builder(group, clock.timeSource()).maxExchangesPerConnection(2).build();
    List<Channel> used = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      HttpStream s = acquire(loopA);
      assertThat(exchange(s, "/" + i)).isEqualTo("hello /" + i);
      used.add(s.channel());
      s.release();
      if (i % 2 == 1) { // its connection's second exchange: the connection closes
        await().atMost(Duration.ofSeconds(10)).until(() -> !s.channel().isOpen());
      }
    }
    // Exchanges 1-2, 3-4 and 5 ran on three connections.
    assertThat(used.get(1)).isSameAs(used.get(0));
    assertThat(used.get(3)).isSameAs(used.get(2));
    assertThat(new HashSet<>(used)).hasSize(3);
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 1);
    assertThat(pool.idleConnections()).isEqualTo(1);
  }

  @Test
  void withoutALimitAConnectionCarriesEveryExchange() throws Exception {
    pool.close();
    pool = HttpClientPool.builder(group, clock.timeSource()).maxExchangesPerConnection(0).build();
    Set<Channel> used = new HashSet<>();
    for (int i = 0; i < 1_200; i++) {
      HttpStream s = acquire(loopA);
      assertThat(exchange(s, "/" + i)).isEqualTo("hello /" + i);
      used.add(s.channel());
      s.release();
    }
    assertThat(used).hasSize(1);
  }

  @Test
  void abortedStreamClosesItsConnection() throws Exception {
    HttpStream s = acquire(loopA);
    s.abort();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 0);
    assertThat(pool.idleConnections()).isZero();
  }

  @Test
  void idleExpiryClosesConnectionsAndDropsTheOrigin() throws Exception {
    HttpStream a = acquire(loopA);
    HttpStream b = acquire(loopB);
    exchange(a, "/a");
    exchange(b, "/b");
    a.release();
    b.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 2);
    assertThat(pool.origins()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(61));
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 0);
    pool.sweep();
    assertThat(pool.idleConnections()).isZero();
    assertThat(pool.origins()).isZero();

    // The same address again (as a balancer passes it): a pool of its own again, not the dropped one.
    HttpStream c = acquire(loopA);
    assertThat(c.isReused()).isFalse();
    assertThat(pool.origins()).isEqualTo(1);
    assertThat(exchange(c, "/c")).isEqualTo("hello /c");
    c.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    assertThat(pool.openConnections()).isEqualTo(1);
  }

  @Test
  void aPoolRetiredBySweepOpensNothingAndItsLateCallerGetsTheOriginsCurrentPool() throws Exception {
    // A caller that found an origin's pool just before a sweep retired it (the race the retire
    // closes): in-loop it is told to look again; off-loop its lease goes to the current pool.
    HttpClientPool.OriginKey key = new HttpClientPool.OriginKey(address, HttpProtocol.HTTP_1_1);
    Http1OriginPool retired = new Http1OriginPool(pool, key, 4, 0);
    assertThat(retired.expireIdle(clock.timeSource().ticker().nanoTime(), 1)).isTrue();

    assertThat(onLoop(loopA, () -> retired.acquire(loopA))).isNull();
    HttpStream late = retired.acquire(loopA).get(10, TimeUnit.SECONDS);
    assertThat(exchange(late, "/late")).isEqualTo("hello /late");
    assertThat(retired.open()).isZero();
    assertThat(pool.openConnections()).isEqualTo(1); // where close() and the sweeps reach it
    late.release();
    pool.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 0);
  }

  @Test
  void anH2PoolRetiredBySweepOpensNothing() {
    H2OriginPool retired =
        new H2OriginPool(pool, new HttpClientPool.OriginKey(address, HttpProtocol.H2C));
    assertThat(retired.expireIdle(clock.timeSource().ticker().nanoTime(), 1)).isTrue();
    assertThat(retired.acquire(loopA)).isNull();
    assertThat(retired.open()).isZero();
  }

  @Test
  void leaseIdleOnTheCallersLoopTakesItsIdleConnectionAtOnce() throws Exception {
    assertThat(onLoop(loopA, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopA))).isNull();
    HttpStream first = acquire(loopA);
    assertThat(exchange(first, "/one", true)).isEqualTo("hello /one");
    first.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);

    // Only the loop's own thread takes from its idle connections, and only its own.
    assertThat(pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopA)).isNull();
    assertThat(onLoop(loopB, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopB))).isNull();
    assertThat(onLoop(loopA, () -> pool.leaseIdle(address, HttpProtocol.H2C, loopA))).isNull();
    assertThat(pool.idleConnections()).isEqualTo(1);

    HttpStream second =
        onLoop(loopA, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopA));
    assertThat(second).isNotNull();
    assertThat(second.isReused()).isTrue();
    assertThat(second.channel()).isSameAs(first.channel());
    assertThat(pool.idleConnections()).isZero();
    assertThat(exchange(second, "/two", true)).isEqualTo("hello /two");
    second.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    assertThat(pool.openConnections()).isEqualTo(1);

    pool.close();
    assertThat(onLoop(loopA, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopA))).isNull();
  }

  @Test
  void aHandleKeptAfterItsEndCannotEndTheNextLeaseOfItsConnection() throws Exception {
    HttpStream stale = acquire(loopA);
    assertThat(exchange(stale, "/one", true)).isEqualTo("hello /one");
    stale.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    HttpStream current = acquire(loopA);
    assertThat(current.channel()).isSameAs(stale.channel());

    stale.release();
    stale.abort();
    onLoop(loopA, () -> null); // whatever the stale calls queued on the loop has run

    assertThat(current.isEnded()).isFalse();
    assertThat(current.channel().isActive()).isTrue();
    assertThat(pool.idleConnections()).isZero();
    assertThat(exchange(current, "/two", true)).isEqualTo("hello /two");
    current.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    assertThat(pool.openConnections()).isEqualTo(1);
  }

  @Test
  void idleLimitHoldsOverAllLoopsAndMovesToTheLoopThatNeedsIt() throws Exception {
    pool.close();
    pool = HttpClientPool.builder(group, clock.timeSource()).maxIdlePerOrigin(1).build();
    HttpStream a = acquire(loopA);
    HttpStream b = acquire(loopB);
    exchange(a, "/a", true);
    exchange(b, "/b", true);
    a.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    b.release(); // loop A keeps the one idle place
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 1);
    assertThat(pool.idleConnections()).isEqualTo(1);

    // Loop A's next lease hands the place it no longer uses to B, which ran short: B keeps its
    // next connection, and A, short now, closes its own at release.
    HttpStream a2 = acquire(loopA);
    assertThat(a2.channel()).isSameAs(a.channel());
    HttpStream b2 = acquire(loopB);
    exchange(b2, "/b2", true);
    b2.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.idleConnections() == 1);
    assertThat(pool.openConnections()).isEqualTo(2);
    exchange(a2, "/a2", true);
    a2.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 1);
    assertThat(pool.idleConnections()).isEqualTo(1);
    assertThat(a2.channel().isActive()).isFalse();
    assertThat(onLoop(loopA, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopA))).isNull();
    HttpStream b3 = onLoop(loopB, () -> pool.leaseIdle(address, HttpProtocol.HTTP_1_1, loopB));
    assertThat(b3.channel()).isSameAs(b2.channel());
    b3.release();
  }

  @Test
  void everyMapOfLiveConnectionsEmptiesAfterManyCycles() throws Exception {
    for (int i = 0; i < 1_000; i++) {
      HttpStream s = acquire(i % 2 == 0 ? loopA : loopB);
      switch (i % 3) {
        case 0 -> s.abort();
        case 1 -> s.release(false);
        default -> s.release(); // kept idle, reused by a later cycle on its loop
      }
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> pool.openConnections() == pool.idleConnections());
    assertThat(pool.idleConnections()).isBetween(1, 2);

    clock.advance(Duration.ofSeconds(61));
    await().atMost(Duration.ofSeconds(10)).until(() -> pool.openConnections() == 0);
    pool.sweep();
    assertThat(pool.idleConnections()).isZero();
    assertThat(pool.origins()).isZero();
  }

  @Test
  void closedPoolRefusesLeases() {
    pool.close();
    assertThat(pool.acquire(address, HttpProtocol.HTTP_1_1, loopA))
        .failsWithin(Duration.ofSeconds(1))
        .withThrowableThat()
        .withMessageContaining("HTTP client pool is closed");
  }

  @Test
  void builderRejectsBadOptions() {
    HttpClientPool.Builder b = HttpClientPool.builder(group, clock.timeSource());
    assertThatThrownBy(() -> b.maxIdlePerOrigin(-1))
        .hasMessage("maxIdlePerOrigin: -1 (expected: >= 0)");
    assertThatThrownBy(() -> b.maxExchangesPerConnection(-1))
        .hasMessage("maxExchangesPerConnection: -1 (expected: >= 0)");
    assertThatThrownBy(() -> b.idleTimeout(Duration.ZERO))
        .hasMessage("idleTimeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> b.connectTimeout(Duration.ofSeconds(-1)))
        .hasMessage("connectTimeout: PT-1S (expected: > 0)");
  }

  /** Runs {@code task} on {@code loop} (as a proxied exchange does) and returns its result. */
  private static <T> T onLoop(EventLoop loop, Callable<T> task) throws Exception {
    return loop.submit(task).get(10, TimeUnit.SECONDS);
  }

  private HttpStream acquire(EventLoop loop) throws Exception {
    return pool.acquire(address, HttpProtocol.HTTP_1_1, loop).get(10, TimeUnit.SECONDS);
  }

  /** Sends a GET on the stream and returns the response body; leaves the lease open. */
  private static String exchange(HttpStream stream, String path) throws Exception {
    return exchange(stream, path, false);
  }

  /**
   * Sends a GET on the stream and returns the response body; leaves the lease open.
   *
   * @param asReader attach the reader with {@link HttpStream#attachReader} instead of {@link
   *     HttpStream#attach}
   */
  private static String exchange(HttpStream stream, String path, boolean asReader) throws Exception {
    CompletableFuture<String> body = new CompletableFuture<>();
    StringBuilder text = new StringBuilder();
    ChannelInboundHandlerAdapter reader = new ChannelInboundHandlerAdapter() {
      @Override
      public void handlerAdded(ChannelHandlerContext ctx) {
        ctx.read();
      }

      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
          if (msg instanceof HttpResponse r && r.status().code() != 200) {
            body.completeExceptionally(new AssertionError("status " + r.status()));
          }
          if (msg instanceof HttpContent c) {
            text.append(c.content().toString(StandardCharsets.UTF_8));
          }
          if (msg instanceof LastHttpContent) {
            body.complete(text.toString());
          } else {
            ctx.read();
          }
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }
    };
    if (asReader) {
      stream.attachReader(reader);
    } else {
      stream.attach(reader);
    }
    DefaultFullHttpRequest req =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path, Unpooled.EMPTY_BUFFER);
    req.headers().set(HttpHeaderNames.HOST, "origin");
    stream.channel().writeAndFlush(req);
    return body.get(10, TimeUnit.SECONDS);
  }
}
