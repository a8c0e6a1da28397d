package dev.portage.proxy.service;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The service proxy's metrics (prefix {@code portage_service_proxy_}). The sync histogram follows
 * kube-proxy's {@code sync_proxy_rules_duration_seconds}. Label {@code service} is the service name,
 * {@code endpoint} the endpoint's {@code host:port}. Thread-safe.
 */
final class ServiceProxyMetrics {

  static final String PREFIX = "portage_service_proxy_";

  /** Why an accepted connection was closed without reaching an endpoint. */
  enum Rejection {
    NO_ENDPOINTS("no_endpoints"),
    DIALS_FAILED("dials_failed");

    final String label;

    Rejection(String label) {
      this.label = label;
    }
  }

  private final Gauge activeConnections;
  private final Counter connections;
  private final Counter dialFailures;
  private final Counter rejected;
  private final Counter bytes;
  private final Histogram syncDuration;
  private final Counter syncs;
  private final Counter syncErrors;
  private final Counter sourceErrors;
  private final Gauge services;
  private final Histogram nftApply;

  ServiceProxyMetrics(PrometheusRegistry registry) {
    activeConnections =
        Gauge.builder()
            .name(PREFIX + "active_connections")
            .help("Proxied connections open now, by service and endpoint.")
            .labelNames("service", "endpoint")
            .register(registry);
    connections =
        Counter.builder()
            .name(PREFIX + "connections_total")
            .help("Connections relayed to an endpoint, by service and endpoint.")
            .labelNames("service", "endpoint")
            .register(registry);
    dialFailures =
        Counter.builder()
            .name(PREFIX + "dial_failures_total")
            .help("Failed or timed-out dials to an endpoint, by service and endpoint.")
            .labelNames("service", "endpoint")
            .register(registry);
    rejected =
        Counter.builder()
            .name(PREFIX + "rejected_connections_total")
            .help("Accepted connections closed without reaching an endpoint, by service and reason.")
            .labelNames("service", "reason")
            .register(registry);
    bytes =
        Counter.builder()
            .name(PREFIX + "bytes_total")
            .help("Bytes relayed, by service and direction (in: client to endpoint, out: endpoint to client).")
            .labelNames("service", "direction")
            .register(registry);
    syncDuration =
        Histogram.builder()
            .name(PREFIX + "sync_proxy_rules_duration_seconds")
            .help("Time one sync of listeners and balancers took.")
            .classicOnly()
            .classicUpperBounds(0.001, 0.005, 0.025, 0.1, 0.5, 1, 5)
            .register(registry);
    syncs =
        Counter.builder()
            .name(PREFIX + "syncs_total")
            .help("Syncs of listeners and balancers run.")
            .register(registry);
    syncErrors =
        Counter.builder()
            .name(PREFIX + "sync_errors_total")
            .help("Services a sync could not apply (for example a listen address that cannot be bound).")
            .register(registry);
    sourceErrors =
        Counter.builder()
            .name(PREFIX + "source_errors_total")
            .help("Endpoint source updates rejected (for example a malformed endpoints file).")
            .register(registry);
    nftApply =
        Histogram.builder()
            .name(PREFIX + "nft_apply_seconds")
            .help("Time one nft -f - transaction took (process start to exit), full and partial syncs.")
            .classicOnly()
            .classicUpperBounds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
            .register(registry);
    services =
        Gauge.builder()
            .name(PREFIX + "services")
            .help("Services with an open listener.")
            .register(registry);
  }

  void connectionOpened(String service, String endpoint) {
    connections.labelValues(service, endpoint).inc();
    activeConnections.labelValues(service, endpoint).inc();
  }

  void connectionClosed(String service, String endpoint) {
    activeConnections.labelValues(service, endpoint).dec();
  }

  void dialFailed(String service, String endpoint) {
    dialFailures.labelValues(service, endpoint).inc();
  }

  void rejected(String service, Rejection reason) {
    rejected.labelValues(service, reason.label).inc();
  }

  /** The counter of bytes from clients to endpoints of {@code service}. */
  CounterDataPoint bytesIn(String service) {
    return bytes.labelValues(service, "in");
  }

  /** The counter of bytes from endpoints to clients of {@code service}. */
  CounterDataPoint bytesOut(String service) {
    return bytes.labelValues(service, "out");
  }

  void synced(long nanos, int openServices) {
    syncs.inc();
    syncDuration.observe(nanos / 1e9);
    services.set(openServices);
  }

  void nftApplied(long nanos) {
    nftApply.observe(nanos / 1e9);
  }

  void syncError() {
    syncErrors.inc();
  }

  void sourceError() {
    sourceErrors.inc();
  }
}
