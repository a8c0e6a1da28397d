package dev.portage.proxy.mesh;

import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.Exemplars;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import java.util.ArrayList;
import java.util.List;

/**
 * A classic-only histogram family for observations on the request path: each thread keeps its own
 * bucket counts and sum ({@link PerThreadCells}), added up when scraped. A Prometheus {@link
 * Histogram} makes several atomic updates on shared cells per observation; this one's exposition is
 * that of the classic-only {@link Histogram} the builder describes (name, help, label names, bucket
 * bounds, counts, sum, created times), whose metadata and bounds it takes. Thread-safe.
 */
final class PerThreadHistogram extends PerThreadFamily<PerThreadHistogram.Series> {

  private final double[] upperBounds; // the last is +Inf

  /** @param builder a classic-only histogram's name, help, label names and buckets; not built yet */
  PerThreadHistogram(Histogram.Builder builder, String... labelNames) {
    this(builder.labelNames(labelNames).classicOnly().build(), labelNames);
  }

  private PerThreadHistogram(Histogram template, String[] labelNames) {
    super(template, labelNames);
    // The bounds as the histogram itself has them (+Inf added, configuration applied).
    template.labelValues(labelNames); // a throwaway series to read them back from
    ClassicHistogramBuckets b = template.collect().getDataPoints().get(0).getClassicBuckets();
    upperBounds = new double[b.size()];
    for (int i = 0; i < upperBounds.length; i++) {
      upperBounds[i] = b.getUpperBound(i);
    }
  }

  @Override
  Series newSeries(Labels labels) {
    return new Series(labels, upperBounds);
  }

  @Override
  public HistogramSnapshot collect() {
    List<HistogramDataPointSnapshot> points = new ArrayList<>();
    for (Series s : allSeries()) {
      points.add(s.snapshot());
    }
    return new HistogramSnapshot(getMetadata(), points);
  }

  /** One series of the family: slots 0..n-1 count the buckets, slot n holds the sum's bits. */
  static final class Series {
    private final Labels labels;
    private final double[] upperBounds;
    private final long createdMillis = System.currentTimeMillis(); // as a Histogram's data point
    private final PerThreadCells cells;

    private Series(Labels labels, double[] upperBounds) {
      this.labels = labels;
      this.upperBounds = upperBounds;
      this.cells = new PerThreadCells(upperBounds.length + 1);
    }

    /** Counts {@code value} in the first bucket whose upper bound is not below it (NaN is ignored). */
    void observe(double value) {
      if (Double.isNaN(value)) {
        return;
      }
      int i = 0;
      while (value > upperBounds[i]) { // the last bound is +Inf
        i++;
      }
      long[] slots = cells.mine();
      PerThreadCells.add(slots, i, 1);
      PerThreadCells.addDouble(slots, upperBounds.length, value);
    }

    private HistogramDataPointSnapshot snapshot() {
      int n = upperBounds.length;
      long[] counts = new long[n];
      double[] sum = {0};
      cells.forEach(slots -> {
        for (int i = 0; i < n; i++) {
          counts[i] += PerThreadCells.read(slots, i);
        }
        sum[0] += Double.longBitsToDouble(PerThreadCells.read(slots, n));
      });
      return new HistogramDataPointSnapshot(
          ClassicHistogramBuckets.of(upperBounds, counts), sum[0], labels, Exemplars.EMPTY, createdMillis);
    }
  }
}
