package dev.portage.proxy.mesh;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricFamilyDescriptor;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A counter family for counts on the request path: each thread counts a series in its own cells
 * ({@link PerThreadCells}), summed when scraped. A Prometheus {@link Counter} counts with an atomic
 * add on cells the event loops share (LongAdder), a cache line moving between cores on every request;
 * this one's exposition is the same as that {@link Counter}'s (name, help, label names, values and
 * created times), whose metadata it takes. Thread-safe.
 */
final class PerThreadCounter implements Collector {

  private final Counter template; // never registered: the family's metadata
  private final String[] labelNames;
  private final Map<List<String>, Series> series = new ConcurrentHashMap<>();

  PerThreadCounter(String name, String help, String... labelNames) {
    this.template = Counter.builder().name(name).help(help).labelNames(labelNames).build();
    this.labelNames = labelNames.clone();
  }

  /** The series of these label values (made on first call, and from then on in the exposition). */
  Series labelValues(String... values) {
    if (values.length != labelNames.length) {
      throw new IllegalArgumentException(
          template.getPrometheusName() + ": " + values.length + " label values for " + labelNames.length + " names");
    }
    return series.computeIfAbsent(List.of(values), v -> new Series(Labels.EMPTY.merge(labelNames, values)));
  }

  @Override
  public CounterSnapshot collect() {
    List<CounterDataPointSnapshot> points = new ArrayList<>(series.size());
    for (Series s : series.values()) {
      points.add(new CounterDataPointSnapshot(s.get(), s.labels, null, s.createdMillis));
    }
    return new CounterSnapshot(template.getMetadata(), points);
  }

  @Override
  public String getPrometheusName() {
    return template.getPrometheusName();
  }

  @Override
  public MetricType getMetricType() {
    return template.getMetricType();
  }

  @Override
  public Set<String> getLabelNames() {
    return template.getLabelNames();
  }

  @Override
  public MetricMetadata getMetadata() {
    return template.getMetadata();
  }

  @Override
  public MetricFamilyDescriptor getMetricFamilyDescriptor() {
    return template.getMetricFamilyDescriptor();
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
