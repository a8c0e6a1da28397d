package dev.portage.control.destination;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;

/** Reads one sample from a registry, for tests. */
final class Metrics {

  private Metrics() {}

  /** The value of metric {@code name} (Prometheus name, without _total) with the given label pairs. */
  static double value(PrometheusRegistry registry, String name, String... labelPairs) {
    for (MetricSnapshot s : registry.scrape()) {
      if (!s.getMetadata().getPrometheusName().equals(name)) {
        continue;
      }
      for (DataPointSnapshot d : s.getDataPoints()) {
        boolean match = true;
        for (int i = 0; i < labelPairs.length; i += 2) {
          match &= labelPairs[i + 1].equals(d.getLabels().get(labelPairs[i]));
        }
        if (match) {
          if (d instanceof CounterSnapshot.CounterDataPointSnapshot c) {
            return c.getValue();
          }
          if (d instanceof GaugeSnapshot.GaugeDataPointSnapshot g) {
            return g.getValue();
          }
        }
      }
    }
    throw new AssertionError("no sample " + name + " " + String.join(",", labelPairs));
  }
}
