package dev.portage.tunnel.server;

import dev.portage.api.konnectivity.PacketType;
import dev.portage.tunnel.internal.GoStatusCodes;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The tunnel server's metrics, with upstream proxy-server names, labels and histogram buckets (prefix
 * {@code konnectivity_network_proxy_}) so existing dashboards keep working. Upstream's counters whose
 * names end in {@code _count} ({@code dial_failure_count}, {@code culled_leases_count}) are monotonic
 * but declared as gauges: a Prometheus-Java counter would be exposed as {@code ..._count_total},
 * breaking the upstream name. Status codes are spelled as grpc-go spells them. Thread-safe.
 */
final class ServerMetrics {
  static final String PREFIX = "konnectivity_network_proxy_server_";

  /** {@code segment} label values, as upstream spells them. */
  static final String FROM_AGENT = "from_agent";
  static final String TO_AGENT = "to_agent";
  static final String FROM_CLIENT = "from_client";
  static final String TO_CLIENT = "to_client";

  /** {@code service_method} label values. */
  static final String PROXY = "Proxy";
  static final String CONNECT = "Connect";
  static final String HTTP_CONNECT = "HTTP-CONNECT";

  /** {@code reason} label values of {@code server_dial_failure_count}. */
  enum DialFailure {
    NO_AGENT("no_agent"),
    ERROR_RESPONSE("error_response"),
    UNRECOGNIZED_RESPONSE("unrecognized_response"),
    SEND_RSP("send_rsp"),
    BACKEND_CLOSE("backend_close"),
    BACKEND_DIAL_TIMEOUT("backend_dial_timeout"),
    FRONTEND_CLOSE("frontend_close");

    final String label;

    DialFailure(String label) {
      this.label = label;
    }
  }

  private final Histogram dialDuration;
  private final Histogram frontendWriteDuration;
  private final Gauge grpcConnections;
  private final Gauge httpConnections;
  private final Gauge readyBackends;
  private final Gauge pendingDials;
  private final Gauge establishedConnections;
  private final Gauge fullReceiveChannels;
  private final Gauge dialFailures;
  private final Counter streamPackets;
  private final Counter streamErrors;
  private final Counter receiveQueueOverflows;
  private final Gauge flowControlStreams;
  private final Gauge flowControlPaused;
  private final Counter flowControlErrors;
  private final Counter flowControlPauses;
  private final Gauge queuePeakBytes;
  private final Counter tokenReviews;
  private final Gauge readyBackendConnections;
  private final Gauge culledLeases;
  private final Counter leaseDeletes;
  private final Counter leaseLists;
  private final Histogram leaseDeleteLatency;
  private final Histogram leaseListLatency;
  private final AtomicLong queuePeak = new AtomicLong();

  ServerMetrics(PrometheusRegistry registry) {
    // upstream's buckets for both (pkg/server/metrics)
    double[] latency = {0.000001, 0.00001, 0.0001, 0.005, 0.025, 0.1, 0.5, 2.5, 12.5};
    dialDuration = Histogram.builder()
        .name(PREFIX + "dial_duration_seconds")
        .help("Latency of dial to the remote endpoint in seconds")
        .classicOnly()
        .classicUpperBounds(latency)
        .register(registry);
    frontendWriteDuration = Histogram.builder()
        .name(PREFIX + "frontend_write_duration_seconds")
        .help("Latency of write to the frontend in seconds")
        .classicOnly()
        .classicUpperBounds(latency)
        .register(registry);
    grpcConnections = Gauge.builder()
        .name(PREFIX + "grpc_connections")
        .help("Number of current grpc connections, partitioned by service method")
        .labelNames("service_method")
        .register(registry);
    httpConnections = Gauge.builder()
        .name(PREFIX + "http_connections")
        .help("Number of current HTTP CONNECT connections")
        .register(registry);
    readyBackends = Gauge.builder()
        .name(PREFIX + "ready_backends")
        .help("Number of agents a proxy strategy can pick from")
        .labelNames("proxy_strategy")
        .register(registry);
    pendingDials = Gauge.builder()
        .name(PREFIX + "pending_backend_dials")
        .help("Current number of pending backend dials")
        .register(registry);
    establishedConnections = Gauge.builder()
        .name(PREFIX + "established_connections")
        .help("Current number of established end-to-end connections")
        .register(registry);
    fullReceiveChannels = Gauge.builder()
        .name(PREFIX + "full_receive_channels")
        .help("Number of connections whose queue toward the frontend is backlogged")
        .labelNames("service_method")
        .register(registry);
    dialFailures = Gauge.builder()
        .name(PREFIX + "dial_failure_count")
        .help("Number of dial failures observed, by reason (monotonic)")
        .labelNames("reason")
        .register(registry);
    streamPackets = Counter.builder()
        .name(PREFIX + "stream_packets")
        .help("Count of packets processed, by segment and packet type")
        .labelNames("segment", "packet_type")
        .register(registry);
    streamErrors = Counter.builder()
        .name(PREFIX + "stream_errors")
        .help("Count of gRPC stream errors, by segment, code and packet type")
        .labelNames("segment", "code", "packet_type")
        .register(registry);
    receiveQueueOverflows = Counter.builder()
        .name(PREFIX + "receive_queue_overflows")
        .help("Connections closed because their queue toward the frontend overflowed (Portage)")
        .labelNames("service_method")
        .register(registry);
    flowControlStreams = Gauge.builder()
        .name(PREFIX + "flow_control_streams")
        .help("Agent streams on which per-connection flow control was negotiated (Portage)")
        .register(registry);
    flowControlPaused = Gauge.builder()
        .name(PREFIX + "flow_control_paused_connections")
        .help("Connections whose frontend reads are paused until the agent grants credit (Portage)")
        .labelNames("service_method")
        .register(registry);
    flowControlPauses = Counter.builder()
        .name(PREFIX + "flow_control_pauses")
        .help("Times a connection's frontend reads paused for lack of credit from the agent (Portage)")
        .labelNames("service_method")
        .register(registry);
    flowControlErrors = Counter.builder()
        .name(PREFIX + "flow_control_errors")
        .help("Connections closed because the agent broke the flow control protocol (Portage)")
        .register(registry);
    queuePeakBytes = Gauge.builder()
        .name(PREFIX + "connection_queue_peak_bytes")
        .help("Most bytes any one connection has held queued toward its frontend since start (Portage)")
        .register(registry);
    tokenReviews = Counter.builder()
        .name(PREFIX + "token_reviews")
        .help("Agent token checks by outcome: reviewed, cached, error, overload (refused at once), timeout (Portage)")
        .labelNames("outcome")
        .register(registry);
    readyBackendConnections = Gauge.builder()
        .name(PREFIX + "ready_backend_connections")
        .help("Number of konnectivity agent connected to the proxy server. DEPRECATED, please use ready_backends")
        .register(registry);
    culledLeases = Gauge.builder()
        .name(PREFIX + "culled_leases_count")
        .help("Count of expired leases that the lease garbage collection controller has culled (monotonic)")
        .register(registry);
    leaseDeletes = Counter.builder()
        .name(PREFIX + "lease_delete_total")
        .help("Count of lease deletion calls by the server, by HTTP status code and reason")
        .labelNames("http_status_code", "reason")
        .register(registry);
    leaseLists = Counter.builder()
        .name(PREFIX + "lease_list_total")
        .help("Count of lease list calls by the server, by HTTP status code and reason")
        .labelNames("http_status_code", "reason")
        .register(registry);
    leaseDeleteLatency = Histogram.builder()
        .name(PREFIX + "lease_delete_latency_seconds")
        .help("Latency of lease deletion calls by the server, by HTTP status code")
        .classicOnly()
        .labelNames("http_status_code")
        .register(registry);
    leaseListLatency = Histogram.builder()
        .name(PREFIX + "lease_list_latency_seconds")
        .help("Latency of lease list calls by the server, by HTTP status code")
        .classicOnly()
        .labelNames("http_status_code")
        .register(registry);
    readyBackendConnections.set(0);
    culledLeases.set(0);
    for (ProxyStrategy s : ProxyStrategy.values()) {
      readyBackends.labelValues(s.flagName()).set(0);
    }
    grpcConnections.labelValues(PROXY).set(0);
    grpcConnections.labelValues(CONNECT).set(0);
    for (String method : new String[] {PROXY, HTTP_CONNECT}) {
      fullReceiveChannels.labelValues(method).set(0);
      receiveQueueOverflows.labelValues(method);
      flowControlPaused.labelValues(method).set(0);
      flowControlPauses.labelValues(method);
    }
    queuePeakBytes.set(0);
  }

  void dialDuration(long nanos) {
    dialDuration.observe(nanos / 1e9);
  }

  void frontendWrite(long nanos) {
    frontendWriteDuration.observe(nanos / 1e9);
  }

  void grpcConnection(String serviceMethod, int delta) {
    grpcConnections.labelValues(serviceMethod).inc(delta);
  }

  void httpConnection(int delta) {
    httpConnections.inc(delta);
  }

  void readyBackends(ProxyStrategy strategy, int n) {
    readyBackends.labelValues(strategy.flagName()).set(n);
  }

  /** Agent streams registered, whatever the strategies say (upstream's deprecated gauge). */
  void readyBackendConnections(int n) {
    readyBackendConnections.set(n);
  }

  /** One list of server leases: HTTP {@code code} (0: no answer), status {@code reason} ("" on success). */
  void leaseList(int code, String reason, double seconds) {
    leaseLists.labelValues(Integer.toString(code), reason).inc();
    leaseListLatency.labelValues(Integer.toString(code)).observe(seconds);
  }

  /** One lease deletion, as {@link #leaseList}; {@code culled} when it removed an expired lease. */
  void leaseDelete(int code, String reason, double seconds, boolean culled) {
    leaseDeletes.labelValues(Integer.toString(code), reason).inc();
    leaseDeleteLatency.labelValues(Integer.toString(code)).observe(seconds);
    if (culled) {
      culledLeases.inc();
    }
  }

  void pendingDials(int n) {
    pendingDials.set(n);
  }

  void established(int delta) {
    establishedConnections.inc(delta);
  }

  void fullReceiveChannel(String serviceMethod, int delta) {
    fullReceiveChannels.labelValues(serviceMethod).inc(delta);
  }

  void receiveQueueOverflow(String serviceMethod) {
    receiveQueueOverflows.labelValues(serviceMethod).inc();
  }

  void flowControlStream(int delta) {
    flowControlStreams.inc(delta);
  }

  void flowControlPaused(String serviceMethod, int delta) {
    flowControlPaused.labelValues(serviceMethod).inc(delta);
    if (delta > 0) {
      flowControlPauses.labelValues(serviceMethod).inc();
    }
  }

  void flowControlError() {
    flowControlErrors.inc();
  }

  /** One connection now holds {@code bytes} queued toward its frontend. */
  void queued(long bytes) {
    long prev = queuePeak.get();
    while (bytes > prev) {
      if (queuePeak.compareAndSet(prev, bytes)) {
        queuePeakBytes.set(bytes);
        return;
      }
      prev = queuePeak.get();
    }
  }

  /** One agent token check ended with {@code outcome} (reviewed, cached, error, overload, timeout). */
  void tokenReview(String outcome) {
    tokenReviews.labelValues(outcome).inc();
  }

  void dialFailure(DialFailure reason) {
    dialFailures.labelValues(reason.label).inc();
  }

  void packet(String segment, PacketType type) {
    streamPackets.labelValues(segment, type.name()).inc();
  }

  void streamError(String segment, io.grpc.Status.Code code, PacketType type) {
    streamErrors.labelValues(segment, GoStatusCodes.name(code), type == null ? "Unknown" : type.name()).inc();
  }
}
