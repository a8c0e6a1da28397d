package dev.portage.control.rules;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The rule server's metrics, all labelled by dds type where one applies. Registered on construction,
 * unregistered when the server closes. Thread-safe.
 */
final class RuleMetrics {

  final Gauge connectedClients;
  final Gauge connections;
  final Counter pushes;
  final Histogram pushLatency;
  final Histogram ackLatency;
  final Counter ackTimeouts;
  final Counter staleNonces;
  final Counter unknownTypes;
  final Counter conversionErrors;
  final Counter disconnects;
  final Gauge storeRevision;
  final Gauge unackedPushes;

  private final PrometheusRegistry registry;

  RuleMetrics(PrometheusRegistry registry) {
    this.registry = registry;
    connectedClients =
        Gauge.builder()
            .name("portage_rules_connected_clients")
            .help("dds connections subscribed to a type")
            .labelNames("type")
            .register(registry);
    connections =
        Gauge.builder().name("portage_rules_connections").help("open dds connections").register(registry);
    pushes =
        Counter.builder()
            .name("portage_rules_pushes_total")
            .help("full-state pushes sent to dds clients")
            .labelNames("type")
            .register(registry);
    pushLatency =
        Histogram.builder()
            .name("portage_rules_push_latency_seconds")
            .help("time from the first store change a push includes to the push being written")
            .labelNames("type")
            .classicOnly()
            .register(registry);
    ackLatency =
        Histogram.builder()
            .name("portage_rules_ack_latency_seconds")
            .help("time from a push being queued to its ACK")
            .labelNames("type")
            .classicOnly()
            .register(registry);
    ackTimeouts =
        Counter.builder()
            .name("portage_rules_ack_timeouts_total")
            .help("connections closed because a push was not acknowledged in time")
            .labelNames("type")
            .register(registry);
    staleNonces =
        Counter.builder()
            .name("portage_rules_stale_nonces_total")
            .help("requests carrying a nonce other than the last one sent (ignored; dds has no NACK)")
            .labelNames("type")
            .register(registry);
    unknownTypes =
        Counter.builder()
            .name("portage_rules_unknown_type_requests_total")
            .help("requests for a type dds does not serve (ignored)")
            .register(registry);
    conversionErrors =
        Counter.builder()
            .name("portage_rules_conversion_errors_total")
            .help("stored objects left out of pushes because their spec did not convert")
            .labelNames("type")
            .register(registry);
    disconnects =
        Counter.builder()
            .name("portage_rules_disconnects_total")
            .help("dds connections the server closed, by reason")
            .labelNames("reason")
            .register(registry);
    storeRevision =
        Gauge.builder()
            .name("portage_rules_store_revision")
            .help("kind revision of the latest state of a type")
            .labelNames("type")
            .register(registry);
    unackedPushes =
        Gauge.builder()
            .name("portage_rules_unacked_pushes")
            .help("pushes sent or queued whose ACK has not arrived yet (at most one per connection and type)")
            .labelNames("type")
            .register(registry);
  }

  void conversionError(String type) {
    conversionErrors.labelValues(type).inc();
  }

  void storeRevision(String type, long revision) {
    storeRevision.labelValues(type).set(revision);
  }

  /** Removes every metric from the registry, so that a new server can register the names again. */
  void unregister() {
    for (Collector m : new Collector[] {
      connectedClients, connections, pushes, pushLatency, ackLatency, ackTimeouts, staleNonces, unknownTypes,
      conversionErrors, disconnects, storeRevision, unackedPushes
    }) {
      registry.unregister(m);
    }
  }
}
