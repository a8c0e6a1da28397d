package dev.portage.bench.balance;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.Ticker;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed-rate, open-loop HTTP/1.1 load generator (the wrk2 idea). Request {@code i} is due at
 * {@code start + i / rate} whatever happened to earlier ones; its latency is measured from that
 * intended time to the end of its response, so a stalled server is charged for every request that
 * should have gone out meanwhile (no coordinated omission). Requests go out on a fixed set of
 * keep-alive connections, one request at a time each; when all are busy, due requests queue (and
 * their queueing counts in their latency).
 *
 * <p>Threading: {@link #run} paces on the calling thread and hands each due request to the one
 * event loop that owns the connections, the queue and the result arrays. One run at a time.
 */
final class OpenLoopLoad implements AutoCloseable {

  /** Latencies of one run, in nanoseconds by request index; {@code -1} for a failed request. */
  record Result(long[] latencies, int errors) {

    /** The {@code q} quantile (0..1) of the successful requests from index {@code from} to {@code to}. */
    long quantile(double q, int from, int to) {
      long[] ok = Arrays.stream(latencies, from, to).filter(l -> l >= 0).sorted().toArray();
      if (ok.length == 0) {
        return -1;
      }
      int idx = (int) Math.ceil(q * ok.length) - 1;
      return ok[Math.max(0, Math.min(ok.length - 1, idx))];
    }
  }

  private final EventLoop loop;
  private final Bootstrap bootstrap;
  private final String host;
  private final Ticker ticker;
  private final ArrayDeque<Channel> idle = new ArrayDeque<>(); // loop-owned
  private final ArrayDeque<Integer> queued = new ArrayDeque<>(); // loop-owned
  private boolean closing; // loop-owned
  // Set per run, read on the loop.
  private long startNanos;
  private double periodNanos;
  private long[] latencies;
  private int errors;
  private CountDownLatch finished;

  /**
   * @param loop the single event loop that owns every connection
   * @param host the {@code Host} header of every request
   */
  OpenLoopLoad(EventLoop loop, InetSocketAddress target, String host, int connections, Ticker ticker) {
    if (connections < 1) {
      throw new IllegalArgumentException("connections: " + connections + " (expected: >= 1)");
    }
    this.loop = loop;
    this.host = host;
    this.ticker = ticker;
    this.bootstrap = new Bootstrap()
        .group(loop)
        .channel(NettyTransport.of(loop).channelType())
        .option(ChannelOption.TCP_NODELAY, true)
        .remoteAddress(target)
        .handler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20), new ResponseHandler());
          }
        });
    for (int i = 0; i < connections; i++) {
      Channel ch = bootstrap.connect().syncUninterruptibly().channel();
      loop.submit(() -> idle.add(ch)).syncUninterruptibly();
    }
  }

  /**
   * Sends {@code rate × duration} requests at a constant rate and waits for every answer (at most
   * {@code duration + 30 s}).
   *
   * @param midway run on the pacing thread just before the first request of the second half, or null
   */
  Result run(double rate, Duration duration, Runnable midway) throws InterruptedException {
    if (!(rate > 0)) {
      throw new IllegalArgumentException("rate: " + rate + " (expected: > 0)");
    }
    int n = (int) Math.round(rate * duration.toNanos() / 1e9);
    CountDownLatch done = new CountDownLatch(n);
    long start = ticker.nanoTime();
    double period = 1e9 / rate;
    loop.submit(() -> {
      latencies = new long[n];
      Arrays.fill(latencies, -1);
      errors = 0;
      startNanos = start;
      periodNanos = period;
      finished = done;
    }).syncUninterruptibly();
    for (int i = 0; i < n; i++) {
      if (i == n / 2 && midway != null) {
        midway.run();
      }
      long due = start + (long) (i * period);
      long wait;
      while ((wait = due - ticker.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      int index = i;
      loop.execute(() -> send(index));
    }
    if (!done.await(duration.toSeconds() + 30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("load: " + done.getCount() + " of " + n + " requests unanswered after 30 s");
    }
    long[] copy = loop.submit(() -> latencies.clone()).syncUninterruptibly().getNow();
    int errs = loop.submit(() -> errors).syncUninterruptibly().getNow();
    return new Result(copy, errs);
  }

  private void send(int index) {
    Channel ch = idle.poll();
    if (ch == null) {
      queued.add(index);
      return;
    }
    dispatch(ch, index);
  }

  private void dispatch(Channel ch, int index) {
    ch.attr(ResponseHandler.INDEX).set(index);
    FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/");
    req.headers().set(HttpHeaderNames.HOST, host);
    ch.writeAndFlush(req);
  }

  /** Records request {@code index} (on the loop) and gives the connection the next queued request. */
  private void finish(Channel ch, int index, boolean ok) {
    if (ok) {
      latencies[index] = ticker.nanoTime() - (startNanos + (long) (index * periodNanos));
    } else {
      errors++;
    }
    finished.countDown();
    if (!ch.isActive()) {
      return;
    }
    Integer next = queued.poll();
    if (next != null) {
      dispatch(ch, next);
    } else {
      idle.add(ch);
    }
  }

  private final class ResponseHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
    static final io.netty.util.AttributeKey<Integer> INDEX = io.netty.util.AttributeKey.valueOf("bench.index");

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse resp) {
      Integer index = ctx.channel().attr(INDEX).getAndSet(null);
      if (index != null) {
        finish(ctx.channel(), index, resp.status().code() == 200);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      idle.remove(ctx.channel());
      Integer index = ctx.channel().attr(INDEX).getAndSet(null);
      if (index != null) {
        finish(ctx.channel(), index, false);
      }
      if (closing) {
        return;
      }
      // Replace the lost connection so the pool keeps its size.
      bootstrap.connect().addListener(f -> {
        if (f.isSuccess()) {
          Channel ch = ((io.netty.channel.ChannelFuture) f).channel();
          Integer next = queued.poll();
          if (next != null) {
            dispatch(ch, next);
          } else {
            idle.add(ch);
          }
        }
      });
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  @Override
  public void close() {
    loop.submit(() -> {
      closing = true;
      for (Channel ch : idle) {
        ch.close();
      }
      idle.clear();
    }).syncUninterruptibly();
  }
}
