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

  static void run(List<String> names, List<IntSupplier> cases, int ops, int rounds) throws Exception {
    rounds(names, i -> loop(cases.get(i), ops), rounds, "op");
  }

  /** One measurement of a case: its CPU ns and bytes allocated per {@code unit}. */
  interface Measurement {
    double[] of(int caseIndex) throws Exception;
  }

  /**
   * Warms every case up once, measures them interleaved for {@code rounds} rounds and prints one
   * line per case (median and best ns, median bytes per {@code unit}).
   */
  static void rounds(List<String> names, Measurement measure, int rounds, String unit)
      throws Exception {
    double[][] ns = new double[names.size()][rounds];
    double[][] bytes = new double[names.size()][rounds];
    for (int i = 0; i < names.size(); i++) {
      measure.of(i); // warm-up
    }
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < names.size(); i++) {
        double[] m = measure.of(i);
        ns[i][r] = m[0];
        bytes[i][r] = m[1];
      }
    }
    for (int i = 0; i < names.size(); i++) {
      double[] t = ns[i].clone();
      double[] b = bytes[i].clone();
      Arrays.sort(t);
      Arrays.sort(b);
      System.out.printf("%-18s cpu ns/%s median %7.1f best %7.1f  B/%s %6.1f%n",
          names.get(i), unit, t[rounds / 2], t[0], unit, b[rounds / 2]);
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
