package dev.portage.proxy.mesh;

import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricFamilyDescriptor;
import io.prometheus.metrics.model.snapshots.MetricMetadata;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the per-thread metric families ({@link PerThreadCounter}, {@link PerThreadHistogram}) share:
 * the series by label values, and the family's description, taken from an unregistered Prometheus
 * metric of the same kind so the exposition cannot drift from it. Thread-safe.
 *
 * @param <S> a series of the family
 */
abstract class PerThreadFamily<S> implements Collector {

  private final Collector template; // never registered: the family's metadata
  private final String[] labelNames;
  private final Map<List<String>, S> series = new ConcurrentHashMap<>();

  PerThreadFamily(Collector template, String[] labelNames) {
    this.template = template;
    this.labelNames = labelNames.clone();
  }

  /** The series of these label values (made on first call, and from then on in the exposition). */
  final S labelValues(String... values) {
    if (values.length != labelNames.length) {
      throw new IllegalArgumentException(
          template.getPrometheusName() + ": " + values.length + " label values for " + labelNames.length + " names");
    }
    return series.computeIfAbsent(List.of(values), v -> newSeries(Labels.EMPTY.merge(labelNames, values)));
  }

  /** A new series with these labels. */
  abstract S newSeries(Labels labels);

  /** Every series made so far. */
  final Collection<S> allSeries() {
    return series.values();
  }

  @Override
  public final String getPrometheusName() {
    return template.getPrometheusName();
  }

  @Override
  public final MetricType getMetricType() {
    return template.getMetricType();
  }

  @Override
  public final Set<String> getLabelNames() {
    return template.getLabelNames();
  }

  @Override
  public final MetricMetadata getMetadata() {
    return template.getMetadata();
  }

  @Override
  public final MetricFamilyDescriptor getMetricFamilyDescriptor() {
    return template.getMetricFamilyDescriptor();
  }
}
