package dev.portage.bench.time;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The cost of a route timeout's timer as the sidecar's request stack pays it: scheduled when a
 * request starts and cancelled when its answer comes, on every event loop at once. Modes: {@code
 * shared} (every loop schedules on one {@link TimeSource#newTimer} scheduler) and {@code loop}
 * ({@link TimeSource#scheduleOn} the caller's loop). Prints thread CPU ns and bytes allocated per
 * schedule + cancel inside the loops, median and best of the rounds. Usage: {@code java -cp
 * bench/target/benchmarks.jar dev.portage.bench.time.RouteTimerCpuTime [shared|loop [loops
 * [opsPerRound [rounds]]]]}.
 */
public final class RouteTimerCpuTime {

  private static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  /** Requests in flight per loop: the timers a loop holds at once. */
  private static final int IN_FLIGHT = 32;

  private RouteTimerCpuTime() {}

  /** Runs the rounds and prints one line. */
  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "loop";
    int loops = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int ops = args.length > 2 ? Integer.parseInt(args[2]) : 200_000;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 15;
    if (!mode.equals("loop") && !mode.equals("shared")) {
      throw new IllegalArgumentException("mode: " + mode + " (expected: shared or loop)");
    }
    ScheduledExecutorService timer = TimeSource.newTimer("route-timer-bench");
    TimeSource time = TimeSource.system(timer);
    EventLoopGroup group = NettyTransport.best().newEventLoopGroup(loops, "route-timer-bench");
    try {
      List<EventLoop> all = new ArrayList<>();
      for (int i = 0; i < loops; i++) {
        all.add(group.next());
      }
      boolean onLoop = mode.equals("loop");
      runAll(all, time, onLoop, ops); // warm-up
      double[] ns = new double[rounds];
      double[] bytes = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        double[] m = runAll(all, time, onLoop, ops);
        ns[r] = m[0];
        bytes[r] = m[1];
      }
      Arrays.sort(ns);
      Arrays.sort(bytes);
      System.out.printf("%-6s %d loops: cpu ns/timer median %6.1f best %6.1f  B/timer median %6.1f best %6.1f%n",
          mode, loops, ns[rounds / 2], ns[0], bytes[rounds / 2], bytes[0]);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      timer.shutdownNow();
    }
  }

  /** Every loop at once; the mean over the loops of CPU ns and bytes per timer. */
  private static double[] runAll(List<EventLoop> loops, TimeSource time, boolean onLoop, int ops)
      throws Exception {
    List<Future<double[]>> runs = new ArrayList<>();
    for (EventLoop loop : loops) {
      runs.add(loop.submit(() -> run(loop, time, onLoop, ops)));
    }
    double ns = 0;
    double bytes = 0;
    for (Future<double[]> f : runs) {
      double[] m = f.get();
      ns += m[0] / loops.size();
      bytes += m[1] / loops.size();
    }
    return new double[] {ns, bytes};
  }

  /** On the loop: {@code ops} timers of 10 s, each cancelled {@link #IN_FLIGHT} timers later. */
  private static double[] run(EventLoop loop, TimeSource time, boolean onLoop, int ops) {
    ScheduledFuture<?>[] ring = new ScheduledFuture<?>[IN_FLIGHT];
    Runnable expire = () -> { };
    long delay = TimeUnit.SECONDS.toNanos(10);
    long cpu = MX.getCurrentThreadCpuTime();
    long alloc = MX.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < ops; i++) {
      int slot = i % IN_FLIGHT;
      if (ring[slot] != null) {
        ring[slot].cancel(false);
      }
      ring[slot] = onLoop
          ? time.scheduleOn(loop, expire, delay)
          : time.scheduler().schedule(expire, delay, TimeUnit.NANOSECONDS);
    }
    for (ScheduledFuture<?> f : ring) {
      if (f != null) { // fewer ops than slots
        f.cancel(false);
      }
    }
    return new double[] {
        (MX.getCurrentThreadCpuTime() - cpu) / (double) ops,
        (MX.getCurrentThreadAllocatedBytes() - alloc) / (double) ops};
  }
}
