package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The per-thread counter and histogram families scrape exactly as the Prometheus {@link Counter}
 * and classic-only {@link Histogram} they replace on the request path, given the same counts from
 * several threads, in both text formats.
 */
class PerThreadMetricsTest {

  private static final double[] MS_BUCKETS = {1, 2, 5, 10, 50000};

  /** Same counts into a Prometheus family ({@code real}) and into ours ({@code ours}). */
  interface Counting {
    void inc(String status);

    void observe(String status, double value);
  }

  @Test
  void exposesWhatPrometheusCounterAndHistogramWouldFromSeveralThreads() throws Exception {
    PrometheusRegistry real = new PrometheusRegistry();
    Counter counter = Counter.builder().name("request_total").help("Requests (Linkerd's name)")
        .labelNames("authority", "status_code").register(real);
    Histogram seconds = Histogram.builder().name("latency_seconds").help("Latency")
        .labelNames("authority", "status_code").classicOnly().register(real);
    Histogram ms = Histogram.builder().name("response_latency_ms").help("Latency in ms")
        .labelNames("authority", "status_code").classicUpperBounds(MS_BUCKETS).classicOnly().register(real);

    PrometheusRegistry mine = new PrometheusRegistry();
    PerThreadCounter myCounter =
        new PerThreadCounter("request_total", "Requests (Linkerd's name)", "authority", "status_code");
    PerThreadHistogram mySeconds = new PerThreadHistogram(
        Histogram.builder().name("latency_seconds").help("Latency"), "authority", "status_code");
    PerThreadHistogram myMs = new PerThreadHistogram(
        Histogram.builder().name("response_latency_ms").help("Latency in ms").classicUpperBounds(MS_BUCKETS),
        "authority", "status_code");
    mine.register(myCounter);
    mine.register(mySeconds);
    mine.register(myMs);

    Counting both = new Counting() {
      @Override
      public void inc(String status) {
        counter.labelValues("web:80", status).inc();
        myCounter.labelValues("web:80", status).inc();
      }

      @Override
      public void observe(String status, double value) {
        // Binary fractions: the sums are exact whatever order the threads' parts are added in.
        seconds.labelValues("web:80", status).observe(value / 1024);
        mySeconds.labelValues("web:80", status).observe(value / 1024);
        ms.labelValues("web:80", status).observe(value);
        myMs.labelValues("web:80", status).observe(value);
      }
    };
    // Values on bucket bounds, between them, and past the last (+Inf); two statuses; three threads.
    List<Double> values = List.of(0.5, 1.0, 1.5, 2.0, 7.0, 10.0, 60000.0, 3.25);
    Runnable traffic = () -> {
      for (int i = 0; i < 1000; i++) {
        String status = i % 10 == 0 ? "503" : "200";
        both.inc(status);
        both.observe(status, values.get(i % values.size()));
      }
    };
    traffic.run(); // this thread too
    Thread a = new Thread(traffic);
    Thread b = new Thread(traffic);
    a.start();
    b.start();
    a.join();
    b.join();

    for (ExpositionFormatWriter writer :
        new ExpositionFormatWriter[] {PrometheusTextFormatWriter.create(), OpenMetricsTextFormatWriter.create()}) {
      String expected = withoutCreatedTimes(scrape(writer, real));
      assertThat(withoutCreatedTimes(scrape(writer, mine))).isEqualTo(expected);
      assertThat(expected).contains("request_total{authority=\"web:80\",status_code=\"200\"} 2700");
    }
  }

  @Test
  void aSeriesAppearsWhenFirstLookedUpAndIsTheSameObjectAfter() {
    PerThreadCounter c = new PerThreadCounter("portage_sidecar_fail_total", "Failures", "authority");
    assertThat(c.collect().getDataPoints()).isEmpty();
    PerThreadCounter.Series s = c.labelValues("web:80");
    assertThat(c.labelValues("web:80")).isSameAs(s);
    assertThat(c.collect().getDataPoints()).singleElement().satisfies(p -> assertThat(p.getValue()).isZero());
    s.inc();
    s.inc();
    assertThat(c.collect().getDataPoints().get(0).getValue()).isEqualTo(2.0);
    assertThat(c.getPrometheusName()).isEqualTo("portage_sidecar_fail");
  }

  private static String scrape(ExpositionFormatWriter writer, PrometheusRegistry registry) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writer.write(out, registry.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  /** Created times are when each series was made, a few milliseconds apart between the two. */
  private static String withoutCreatedTimes(String text) {
    return text.replaceAll("(?m)^(\\S+_created\\{[^}]*\\}) \\S+$", "$1 T");
  }
}
