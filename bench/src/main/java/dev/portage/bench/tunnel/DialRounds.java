package dev.portage.bench.tunnel;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The dial measurement of every route in one phase: {@code blocks} rounds, each running a block of
 * sequential connect + 1-byte echo round trips on every route in turn (the route that starts rotates).
 * A burst of load from elsewhere on a shared box then lands on all routes alike instead of on whichever
 * route happened to be measuring, and the routes are compared under the same conditions. Per route it
 * also counts the context switches and CPU time of the processes on its path ({@link ProcCounters}).
 * Blocking; used from the harness's main thread.
 */
final class DialRounds {
  /** One route's figures: sorted latencies (ns), counters of its processes, the dial count. */
  record Result(long[] sorted, ProcCounters counters, int dials) {
    double switchesPerDial() {
      return counters.switches() / (double) dials;
    }

    double cpuMillisPerDial() {
      return counters.cpuTicks() * 1000.0 / ProcCounters.TICKS_PER_SECOND / dials;
    }

    double jitMillisPerDial() {
      return counters.jitTicks() * 1000.0 / ProcCounters.TICKS_PER_SECOND / dials;
    }
  }

  private DialRounds() {}

  /**
   * @param processes per route, the pids whose wake-ups and CPU a dial on it costs (read before and
   *     after each block)
   */
  static Map<Route, Result> run(List<Route> routes, Map<Route, Supplier<List<Long>>> processes, int dials, int blocks)
      throws IOException {
    int per = Math.max(1, dials / blocks);
    Map<Route, long[]> lat = new LinkedHashMap<>();
    Map<Route, ProcCounters> counters = new LinkedHashMap<>();
    for (Route r : routes) {
      lat.put(r, new long[per * blocks]);
      counters.put(r, ProcCounters.ZERO);
    }
    for (int b = 0; b < blocks; b++) {
      for (int i = 0; i < routes.size(); i++) {
        Route r = routes.get((b + i) % routes.size());
        List<Long> pids = processes.getOrDefault(r, List::of).get();
        ProcCounters before = ProcCounters.of(pids);
        long[] block = r.dialLatencies(per);
        counters.put(r, counters.get(r).plus(ProcCounters.of(pids).minus(before)));
        System.arraycopy(block, 0, lat.get(r), b * per, per);
      }
    }
    Map<Route, Result> out = new LinkedHashMap<>();
    for (Route r : routes) {
      long[] all = lat.get(r);
      Arrays.sort(all);
      out.put(r, new Result(all, counters.get(r), all.length));
    }
    return out;
  }

  /** Collections and pause time of this JVM (the client) so far: [count, milliseconds]. */
  static long[] clientGc() {
    long count = 0;
    long millis = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      count += Math.max(0, gc.getCollectionCount());
      millis += Math.max(0, gc.getCollectionTime());
    }
    return new long[] {count, millis};
  }

  static List<Long> pids(long... pids) {
    List<Long> l = new ArrayList<>();
    for (long p : pids) {
      l.add(p);
    }
    return l;
  }
}
