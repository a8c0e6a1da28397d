package dev.portage.proxy.service;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;

/**
 * The metrics kube-proxy exports under the same names (prefix {@code kubeproxy_}), so dashboards and
 * alerts written for kube-proxy read ours: sync durations, the last sync's time, network programming
 * latency, failed transactions, health probe answers. Label {@code ip_family} is always {@code IPv4}
 * (the proxy programs IPv4 only). Thread-safe.
 */
final class KubeProxyMetrics {

  static final String IPV4 = "IPv4";

  private final Histogram syncDuration;
  private final Histogram fullSyncDuration;
  private final Histogram partialSyncDuration;
  private final Gauge lastSync;
  private final Gauge lastQueued;
  private final Histogram programming;
  private final Counter syncFailures;
  private final Counter healthz;
  private final Counter livez;

  KubeProxyMetrics(PrometheusRegistry registry) {
    double[] syncBuckets = new double[15];
    for (int k = 0; k < syncBuckets.length; k++) {
      syncBuckets[k] = 0.001 * (1 << k);
    }
    syncDuration = histogram(registry, "kubeproxy_sync_proxy_rules_duration_seconds",
        "SyncProxyRules latency in seconds", syncBuckets);
    fullSyncDuration = histogram(registry, "kubeproxy_sync_full_proxy_rules_duration_seconds",
        "SyncProxyRules latency in seconds for full resyncs", syncBuckets);
    partialSyncDuration = histogram(registry, "kubeproxy_sync_partial_proxy_rules_duration_seconds",
        "SyncProxyRules latency in seconds for partial resyncs", syncBuckets);
    lastSync = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_timestamp_seconds")
        .help("The last time proxy rules were successfully synced").labelNames("ip_family").register(registry);
    lastQueued = Gauge.builder().name("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds")
        .help("The last time a sync of proxy rules was queued").labelNames("ip_family").register(registry);
    programming = histogram(registry, "kubeproxy_network_programming_duration_seconds",
        "In Cluster Network Programming Latency in seconds", programmingBuckets());
    syncFailures = Counter.builder().name("kubeproxy_sync_proxy_rules_nftables_sync_failures_total")
        .help("Cumulative proxy nftables sync failures").labelNames("ip_family").register(registry);
    healthz = Counter.builder().name("kubeproxy_proxy_healthz_total")
        .help("Cumulative proxy healthz HTTP status").labelNames("code").register(registry);
    livez = Counter.builder().name("kubeproxy_proxy_livez_total")
        .help("Cumulative proxy livez HTTP status").labelNames("code").register(registry);
  }

  void synced(boolean full, long nanos, double wallSeconds) {
    double seconds = nanos / 1e9;
    syncDuration.labelValues(IPV4).observe(seconds);
    (full ? fullSyncDuration : partialSyncDuration).labelValues(IPV4).observe(seconds);
    lastSync.labelValues(IPV4).set(wallSeconds);
  }

  void queued(double wallSeconds) {
    lastQueued.labelValues(IPV4).set(wallSeconds);
  }

  void programmed(Duration latency) {
    programming.labelValues(IPV4).observe(Math.max(0, latency.toNanos() / 1e9));
  }

  void syncFailed() {
    syncFailures.labelValues(IPV4).inc();
  }

  void healthz(int code) {
    healthz.labelValues(Integer.toString(code)).inc();
  }

  void livez(int code) {
    livez.labelValues(Integer.toString(code)).inc();
  }

  private static Histogram histogram(PrometheusRegistry registry, String name, String help, double[] buckets) {
    return Histogram.builder().name(name).help(help).labelNames("ip_family")
        .classicOnly().classicUpperBounds(buckets).register(registry);
  }

  /** kube-proxy's: 0.25, 0.5, 1..59 by 1, 60..115 by 5, 120..300 by 30. */
  private static double[] programmingBuckets() {
    java.util.List<Double> bounds = new java.util.ArrayList<>(java.util.List.of(0.25, 0.5));
    for (int s = 1; s <= 59; s++) {
      bounds.add((double) s);
    }
    for (int s = 60; s <= 115; s += 5) {
      bounds.add((double) s);
    }
    for (int s = 120; s <= 300; s += 30) {
      bounds.add((double) s);
    }
    return bounds.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
