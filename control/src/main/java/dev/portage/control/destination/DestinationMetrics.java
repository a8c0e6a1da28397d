package dev.portage.control.destination;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * Metrics of the destination server. Names: {@code portage_destination_streams{rpc}} (active
 * streams), {@code portage_destination_updates_sent_total{rpc}}, {@code
 * endpoint_updates_queue_overflow_total} (Linkerd's name: Get streams aborted because the client fell
 * behind), {@code portage_destination_profile_invalid_entries_total} (ServiceProfile entries dropped).
 * Registered on construction, unregistered by {@link #unregister()} so that a restarted server can
 * register again. Thread-safe.
 */
final class DestinationMetrics {

  static final String GET = "Get";
  static final String GET_PROFILE = "GetProfile";

  private final PrometheusRegistry registry;
  private final Gauge streams;
  private final Counter updatesSent;
  private final Counter overflows;
  private final Counter invalidProfileEntries;

  DestinationMetrics(PrometheusRegistry registry) {
    this.registry = registry;
    streams =
        Gauge.builder()
            .name("portage_destination_streams")
            .help("Active Destination API streams")
            .labelNames("rpc")
            .register(registry);
    updatesSent =
        Counter.builder()
            .name("portage_destination_updates_sent_total")
            .help("Messages sent on Destination API streams")
            .labelNames("rpc")
            .register(registry);
    overflows =
        Counter.builder()
            .name("endpoint_updates_queue_overflow_total")
            .help("Get streams aborted because their update queue overflowed")
            .register(registry);
    invalidProfileEntries =
        Counter.builder()
            .name("portage_destination_profile_invalid_entries_total")
            .help("ServiceProfile routes, budgets or overrides skipped as invalid, counted once per profile revision")
            .register(registry);
    streams.labelValues(GET).set(0);
    streams.labelValues(GET_PROFILE).set(0);
    updatesSent.labelValues(GET).inc(0);
    updatesSent.labelValues(GET_PROFILE).inc(0);
  }

  void streamOpened(String rpc) {
    streams.labelValues(rpc).inc();
  }

  void streamClosed(String rpc) {
    streams.labelValues(rpc).dec();
  }

  void updateSent(String rpc) {
    updatesSent.labelValues(rpc).inc();
  }

  void overflow() {
    overflows.inc();
  }

  void invalidProfileEntry() {
    invalidProfileEntries.inc();
  }

  void unregister() {
    registry.unregister(streams);
    registry.unregister(updatesSent);
    registry.unregister(overflows);
    registry.unregister(invalidProfileEntries);
  }
}
