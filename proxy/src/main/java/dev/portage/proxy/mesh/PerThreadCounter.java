package dev.portage.proxy.mesh;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.ArrayList;
import java.util.List;

/**
 * A counter family for counts on the request path: each thread counts a series in its own cells
 * ({@link PerThreadCells}), summed when scraped. A Prometheus {@link Counter} counts with an atomic
 * add on cells the event loops share (LongAdder), a cache line moving between cores on every request;
 * this one's exposition is the same as that {@link Counter}'s (name, help, label names, values and
 * created times), whose metadata it takes. Thread-safe.
 */
final class PerThreadCounter extends PerThreadFamily<PerThreadCounter.Series> {

  PerThreadCounter(String name, String help, String... labelNames) {
    super(Counter.builder().name(name).help(help).labelNames(labelNames).build(), labelNames);
  }

  @Override
  Series newSeries(Labels labels) {
    return new Series(labels);
  }

  @Override
  public CounterSnapshot collect() {
    List<CounterDataPointSnapshot> points = new ArrayList<>();
    for (Series s : allSeries()) {
      points.add(new CounterDataPointSnapshot(s.get(), s.labels, null, s.createdMillis));
    }
    return new CounterSnapshot(getMetadata(), points);
  }

  /** One series of the family. */
  static final class Series {
    private final Labels labels;
    private final long createdMillis = System.currentTimeMillis(); // as a Counter's data point
    private final PerThreadCells cells = new PerThreadCells(1);

    private Series(Labels labels) {
      this.labels = labels;
    }

    void inc() {
      PerThreadCells.add(cells.mine(), 0, 1);
    }

    /** The sum over every thread's count. */
    double get() {
      return cells.sum(0);
    }
  }
}
