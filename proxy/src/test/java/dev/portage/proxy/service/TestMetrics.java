package dev.portage.proxy.service;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/** Reads metric samples the way a scraper sees them (Prometheus text format). */
final class TestMetrics {
  private TestMetrics() {}

  static String scrape(PrometheusRegistry registry) {
    return PrometheusTextFormatWriter.create().toDebugString(registry.scrape());
  }

  /** The value of the sample named exactly {@code series} (name and labels), or 0 when absent. */
  static double value(PrometheusRegistry registry, String series) {
    for (String line : scrape(registry).split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]);
      }
    }
    return 0;
  }
}
