package dev.portage.core.admin;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;

/**
 * Serves {@code /metrics}: a scrape of one registry in Prometheus text format 0.0.4, or OpenMetrics
 * text when the scraper's {@code Accept} header asks for it. Thread-safe (the writers are
 * stateless).
 */
final class MetricsEndpoint implements AdminHandler {

  private static final ExpositionFormatWriter PROMETHEUS = PrometheusTextFormatWriter.create();
  private static final ExpositionFormatWriter OPEN_METRICS = OpenMetricsTextFormatWriter.create();

  private final PrometheusRegistry registry;

  MetricsEndpoint(PrometheusRegistry registry) {
    this.registry = registry;
  }

  @Override
  public AdminResponse handle(AdminRequest request) throws IOException {
    String accept = request.headers().get(HttpHeaderNames.ACCEPT);
    ExpositionFormatWriter writer =
        accept != null && OPEN_METRICS.accepts(accept) ? OPEN_METRICS : PROMETHEUS;
    ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
    writer.write(out, registry.scrape());
    return new AdminResponse(200, writer.getContentType(), out.toByteArray(), Map.of());
  }
}
