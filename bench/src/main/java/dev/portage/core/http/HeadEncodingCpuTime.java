package dev.portage.core.http;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The {@link HeadEncodingBenchmark} cases measured in thread CPU time instead of wall time, so that
 * time spent descheduled on a loaded machine does not blur the comparison; Portage's and Netty's
 * encoders run interleaved, round after round, and the median and best round are printed. Not JMH:
 * one JVM, so read the figures as ratios. Usage: {@code java -cp bench/target/benchmarks.jar
 * dev.portage.core.http.HeadEncodingCpuTime [opsPerRound [rounds]]}.
 */
public final class HeadEncodingCpuTime {

  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  private static volatile int sink;

  private HeadEncodingCpuTime() {}

  /** Runs the comparison and prints one line per case. */
  public static void main(String[] args) {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
    String[] encoders = {"portage", "netty"};
    String[] cases = {"responseHeadOnly", "requestHeadOnly", "responseHead", "requestHead"};
    List<IntSupplier> runs = new ArrayList<>();
    for (String c : cases) {
      for (String e : encoders) {
        HeadEncodingBenchmark b = new HeadEncodingBenchmark();
        b.encoder = e;
        b.setUp();
        runs.add(switch (c) {
          case "responseHeadOnly" -> b::responseHeadOnly;
          case "requestHeadOnly" -> b::requestHeadOnly;
          case "responseHead" -> b::responseHead;
          default -> b::requestHead;
        });
      }
    }
    double[][] nsPerOp = new double[runs.size()][rounds];
    for (IntSupplier run : runs) {
      loop(run, ops); // warm-up
    }
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < runs.size(); i++) {
        nsPerOp[i][r] = loop(runs.get(i), ops);
      }
    }
    for (int i = 0; i < runs.size(); i++) {
      double[] v = nsPerOp[i].clone();
      Arrays.sort(v);
      System.out.printf("%-17s %-8s cpu ns/op median %7.1f best %7.1f%n",
          cases[i / 2], encoders[i % 2], v[rounds / 2], v[0]);
    }
  }

  private static double loop(IntSupplier run, int ops) {
    long start = MX.getCurrentThreadCpuTime();
    int s = 0;
    for (int i = 0; i < ops; i++) {
      s += run.getAsInt();
    }
    sink = s;
    return (MX.getCurrentThreadCpuTime() - start) / (double) ops;
  }
}
