package dev.portage.bench.soak;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code /proc} samples of one component, per instance (a restart starts a new instance), and
 * the leak verdict over its latest instance: resident set and threads compared between the first and
 * the last quarter of the samples after warm-up, open fds after the load stopped compared with the
 * baseline of the first quarter. Thread-safe (the sampler adds, the report reads).
 */
final class ResourceSeries {
  /** Growth still counted as flat: RSS and threads (last-quarter max vs first-quarter max). */
  static final double FLAT = 0.20;
  /** Slack on top of the ratios for small numbers: threads, fds. */
  static final int THREAD_SLACK = 2;
  static final int FD_SLACK = 8;
  /** Fewer samples than this after warm-up: no verdict (the instance is too young). */
  static final int MIN_SAMPLES = 8;

  /** One process lifetime of the component. */
  static final class Instance {
    final long pid;
    final long startNanos;
    final List<ProcSample> samples = new ArrayList<>();
    ProcSample settled; // after the load stopped
    long readyNanos = -1;
    long heapBaseline = -1;
    long heapEnd = -1;

    Instance(long pid, long startNanos) {
      this.pid = pid;
      this.startNanos = startNanos;
    }
  }

  /** The verdict for the latest instance; {@code judged} false when it had too few samples. */
  record Verdict(boolean judged, int samples, long rssFirstMax, long rssLastMax, int threadsFirstMax,
      int threadsLastMax, int fdBaseline, int fdEnd, boolean rssFlat, boolean threadsFlat,
      boolean fdsBack, long rssMaxAll, int threadsMaxAll, long heapBaseline, long heapEnd, boolean heapFlat) {

    boolean leak() {
      return judged && !(rssFlat && threadsFlat && fdsBack && heapFlat);
    }
  }

  /** Live heap may grow by this much on top of the ratio (caches filling, JIT metadata). */
  static final long HEAP_SLACK = 8L << 20;

  private final List<Instance> instances = new ArrayList<>();

  synchronized void newInstance(long pid, long startNanos) {
    instances.add(new Instance(pid, startNanos));
  }

  synchronized void add(ProcSample s) {
    Instance i = current();
    if (i != null && i.pid == s.pid()) {
      i.samples.add(s);
    }
  }

  /** The instance with this pid answered its readiness probe at {@code nanos}: warm-up counts from here. */
  synchronized void ready(long pid, long nanos) {
    Instance i = current();
    if (i != null && i.pid == pid && i.readyNanos < 0) {
      i.readyNanos = nanos;
    }
  }

  /** Live heap after a full GC of the instance with this pid: after warm-up, or at the end. */
  synchronized void liveHeap(long pid, long bytes, boolean end) {
    Instance i = current();
    if (i != null && i.pid == pid) {
      if (end) {
        i.heapEnd = bytes;
      } else {
        i.heapBaseline = bytes;
      }
    }
  }

  synchronized void settled(ProcSample s) {
    Instance i = current();
    if (i != null && i.pid == s.pid()) {
      i.settled = s;
    }
  }

  private Instance current() {
    return instances.isEmpty() ? null : instances.get(instances.size() - 1);
  }

  /** Every sample of every instance, oldest first (for the CSV). */
  synchronized List<ProcSample> all() {
    List<ProcSample> all = new ArrayList<>();
    for (Instance i : instances) {
      all.addAll(i.samples);
    }
    return all;
  }

  synchronized Verdict verdict(long warmupNanos) {
    long rssMaxAll = 0;
    int threadsMaxAll = 0;
    for (Instance i : instances) {
      for (ProcSample s : i.samples) {
        rssMaxAll = Math.max(rssMaxAll, s.rssBytes());
        threadsMaxAll = Math.max(threadsMaxAll, s.threads());
      }
    }
    Instance i = current();
    List<ProcSample> after = new ArrayList<>();
    if (i != null && i.readyNanos >= 0) {
      for (ProcSample s : i.samples) {
        if (s.atNanos() - i.readyNanos >= warmupNanos) {
          after.add(s);
        }
      }
    }
    if (after.size() < MIN_SAMPLES) {
      return new Verdict(false, after.size(), 0, 0, 0, 0, 0, 0, true, true, true, rssMaxAll, threadsMaxAll,
          -1, -1, true);
    }
    int q = after.size() / 4;
    List<ProcSample> first = after.subList(0, q);
    List<ProcSample> last = after.subList(after.size() - q, after.size());
    long rssFirst = first.stream().mapToLong(ProcSample::rssBytes).max().orElseThrow();
    long rssLast = last.stream().mapToLong(ProcSample::rssBytes).max().orElseThrow();
    int thFirst = first.stream().mapToInt(ProcSample::threads).max().orElseThrow();
    int thLast = last.stream().mapToInt(ProcSample::threads).max().orElseThrow();
    int[] fds = first.stream().mapToInt(ProcSample::fds).sorted().toArray();
    int fdBaseline = fds[fds.length / 2];
    ProcSample end = i.settled != null ? i.settled : after.get(after.size() - 1);
    boolean rssFlat = rssLast <= rssFirst * (1 + FLAT);
    boolean threadsFlat = thLast <= thFirst * (1 + FLAT) + THREAD_SLACK;
    boolean fdsBack = end.fds() <= fdBaseline * (1 + FLAT) + FD_SLACK;
    boolean heapFlat = i.heapBaseline < 0 || i.heapEnd < 0
        || i.heapEnd <= i.heapBaseline * (1 + FLAT) + HEAP_SLACK;
    return new Verdict(true, after.size(), rssFirst, rssLast, thFirst, thLast, fdBaseline, end.fds(),
        rssFlat, threadsFlat, fdsBack, rssMaxAll, threadsMaxAll, i.heapBaseline, i.heapEnd, heapFlat);
  }
}
