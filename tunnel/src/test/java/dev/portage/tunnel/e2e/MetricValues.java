package dev.portage.tunnel.e2e;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;

/** Reads one series out of a registry: what operators would scrape. */
final class MetricValues {
  static final String SERVER = "konnectivity_network_proxy_server_";
  static final String AGENT = "konnectivity_network_proxy_agent_";

  private MetricValues() {}

  /**
   * The value of {@code name} (Prometheus name, without {@code _total}) summed over the series whose
   * labels match {@code labelPairs}; a histogram counts observations. 0 when no series exists.
   */
  static double value(PrometheusRegistry registry, String name, String... labelPairs) {
    double sum = 0;
    for (MetricSnapshot s : registry.scrape()) {
      if (!s.getMetadata().getPrometheusName().equals(name)) {
        continue;
      }
      for (DataPointSnapshot p : s.getDataPoints()) {
        boolean match = true;
        for (int i = 0; i < labelPairs.length; i += 2) {
          match &= labelPairs[i + 1].equals(p.getLabels().get(labelPairs[i]));
        }
        if (!match) {
          continue;
        }
        if (p instanceof GaugeSnapshot.GaugeDataPointSnapshot g) {
          sum += g.getValue();
        } else if (p instanceof CounterSnapshot.CounterDataPointSnapshot c) {
          sum += c.getValue();
        } else if (p instanceof HistogramSnapshot.HistogramDataPointSnapshot h) {
          sum += h.getCount();
        }
      }
    }
    return sum;
  }
}
