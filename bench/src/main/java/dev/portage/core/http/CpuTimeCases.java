package dev.portage.core.http;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The measuring loop of the single-JVM CPU-time benchmarks in this package: each case warmed up
 * once, then all cases interleaved round after round, each round timed with the thread's CPU time
 * and allocation counters; one line per case with the median and best ns per operation and the
 * median bytes per operation.
 */
final class CpuTimeCases {

  private static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private static volatile int sink;

  private CpuTimeCases() {}

  static void run(List<String> names, List<IntSupplier> cases, int ops, int rounds) {
    double[][] ns = new double[cases.size()][rounds];
    double[][] bytes = new double[cases.size()][rounds];
    for (IntSupplier c : cases) {
      loop(c, ops); // warm-up
    }
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < cases.size(); i++) {
        double[] m = loop(cases.get(i), ops);
        ns[i][r] = m[0];
        bytes[i][r] = m[1];
      }
    }
    for (int i = 0; i < cases.size(); i++) {
      double[] t = ns[i].clone();
      double[] b = bytes[i].clone();
      Arrays.sort(t);
      Arrays.sort(b);
      System.out.printf("%-18s cpu ns/op median %7.1f best %7.1f  B/op %6.1f%n",
          names.get(i), t[rounds / 2], t[0], b[rounds / 2]);
    }
  }

  private static double[] loop(IntSupplier run, int ops) {
    long start = MX.getCurrentThreadCpuTime();
    long alloc = MX.getCurrentThreadAllocatedBytes();
    int s = 0;
    for (int i = 0; i < ops; i++) {
      s += run.getAsInt();
    }
    sink = s;
    return new double[] {
      (MX.getCurrentThreadCpuTime() - start) / (double) ops,
      (MX.getCurrentThreadAllocatedBytes() - alloc) / (double) ops,
    };
  }
}
