package dev.portage.bench.http;

import dev.portage.bench.LoopbackAcceptor;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.HttpStream;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The cost of leasing an idle pooled HTTP/1.1 origin connection and giving it back, as a proxied
 * exchange does it on its own event loop: lease, set the response reader, release. Measured inside
 * the loop in thread CPU time and allocated bytes per lease, median and best of the rounds (one
 * JVM: read the figures as ratios against another build). Modes: {@code acquire} (the future
 * path, any build) and {@code leaseIdle} (the synchronous path, where the build has it). Usage:
 * {@code java -cp bench/target/benchmarks.jar dev.portage.bench.http.PoolLeaseCpuTime [mode
 * [opsPerRound [rounds]]]}.
 */
public final class PoolLeaseCpuTime {

  private static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final MethodHandle LEASE_IDLE = leaseIdle();

  private PoolLeaseCpuTime() {}

  /** Runs the rounds and prints one line. */
  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "acquire";
    int ops = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 15;
    if (mode.equals("leaseIdle") && LEASE_IDLE == null) {
      System.out.println("leaseIdle: not in this build");
      return;
    }
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    EventLoopGroup group = NettyTransport.best().newEventLoopGroup(1, "lease-bench");
    // The origin only holds its sockets: a lease and its release send nothing.
    try (LoopbackAcceptor origin = new LoopbackAcceptor(16, s -> {
          try (s; InputStream in = s.getInputStream()) {
            in.readAllBytes();
          } catch (Exception e) {
            // closed by the pool or the benchmark's end
          }
        });
        HttpClientPool pool = HttpClientPool.builder(group, TimeSource.system(timer)).build()) {
      InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), origin.port());
      EventLoop loop = group.next();
      pool.acquire(address, HttpProtocol.HTTP_1_1, loop).get(10, TimeUnit.SECONDS).release();
      boolean sync = mode.equals("leaseIdle");
      double[] ns = new double[rounds];
      double[] bytes = new double[rounds];
      loop.submit(() -> run(pool, address, loop, sync, ops)).get(); // warm-up
      for (int r = 0; r < rounds; r++) {
        double[] m = loop.submit(() -> run(pool, address, loop, sync, ops)).get();
        ns[r] = m[0];
        bytes[r] = m[1];
      }
      if (pool.openConnections() != 1) {
        throw new IllegalStateException("expected one pooled connection: " + pool.openConnections());
      }
      Arrays.sort(ns);
      Arrays.sort(bytes);
      System.out.printf("%-9s cpu ns/lease median %6.1f best %6.1f  B/lease median %6.1f best %6.1f%n",
          mode, ns[rounds / 2], ns[0], bytes[rounds / 2], bytes[0]);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      timer.shutdownNow();
    }
  }

  /** On the loop: {@code ops} leases; returns CPU ns and allocated bytes per lease. */
  private static double[] run(
      HttpClientPool pool, InetSocketAddress address, EventLoop loop, boolean sync, int ops) {
    ChannelInboundHandlerAdapter reader = new ChannelInboundHandlerAdapter();
    long cpu = MX.getCurrentThreadCpuTime();
    long alloc = MX.getCurrentThreadAllocatedBytes();
    try {
      for (int i = 0; i < ops; i++) {
        HttpStream s = sync
            ? (HttpStream) LEASE_IDLE.invokeExact(pool, address, HttpProtocol.HTTP_1_1, loop)
            : pool.acquire(address, HttpProtocol.HTTP_1_1, loop).join();
        s.attachReader(reader);
        s.release();
      }
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
    return new double[] {
        (MX.getCurrentThreadCpuTime() - cpu) / (double) ops,
        (MX.getCurrentThreadAllocatedBytes() - alloc) / (double) ops};
  }

  /** {@code HttpClientPool.leaseIdle}, or null in a build without it. */
  private static MethodHandle leaseIdle() {
    try {
      return MethodHandles.publicLookup().findVirtual(HttpClientPool.class, "leaseIdle",
          MethodType.methodType(HttpStream.class, InetSocketAddress.class, HttpProtocol.class,
              EventLoop.class));
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }
}
