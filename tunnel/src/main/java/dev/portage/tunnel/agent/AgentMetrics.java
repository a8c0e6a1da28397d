package dev.portage.tunnel.agent;

import dev.portage.api.konnectivity.PacketType;
import dev.portage.tunnel.internal.GoStatusCodes;
import io.grpc.Status;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent's metrics, with upstream proxy-agent names (prefix {@code konnectivity_network_proxy_agent_}).
 * Segments follow upstream: packets the agent sends are {@code from_agent}, packets it receives
 * {@code to_agent}. Thread-safe.
 */
final class AgentMetrics {
  static final String PREFIX = "konnectivity_network_proxy_agent_";
  static final String FROM_AGENT = "from_agent";
  static final String TO_AGENT = "to_agent";

  /** Dial failure reasons, as upstream labels them. */
  enum DialFailure {
    TIMEOUT("timeout"),
    UNKNOWN("unknown");

    final String label;

    DialFailure(String label) {
      this.label = label;
    }
  }

  private final Histogram dialDuration;
  private final Counter dialFailures;
  private final Gauge openServerConnections;
  private final Gauge knownServerCount;
  private final Gauge openEndpointConnections;
  private final Counter streamPackets;
  private final Counter streamErrors;
  private final Counter endpointQueueOverflows;
  private final Gauge flowControlConnections;
  private final Gauge flowControlPaused;
  private final Counter flowControlErrors;
  private final Counter flowControlPauses;
  private final Gauge queuePeakBytes;
  private final Gauge connectionFailures;
  private final Counter leaseLists;
  private final Counter leaseWatches;
  private final Histogram leaseListLatency;
  private final AtomicLong queuePeak = new AtomicLong();

  /** Upstream's agent buckets, for dials and lease lists. */
  private static final double[] BUCKETS = {0.005, 0.025, 0.1, 0.5, 2.5, 10, 30};

  AgentMetrics(PrometheusRegistry registry) {
    dialDuration =
        Histogram.builder()
            .name(PREFIX + "dial_duration_seconds")
            .help("Latency of dial to the remote endpoint in seconds")
            .classicOnly()
            .classicUpperBounds(BUCKETS)
            .register(registry);
    dialFailures =
        Counter.builder()
            .name(PREFIX + "endpoint_dial_failure_total")
            .help("Number of failures dialing the remote endpoint, by reason (example: timeout).")
            .labelNames("reason")
            .register(registry);
    openServerConnections =
        Gauge.builder()
            .name(PREFIX + "open_server_connections")
            .help("Current number of open server connections.")
            .register(registry);
    knownServerCount =
        Gauge.builder()
            .name(PREFIX + "known_server_count")
            .help("Current number of servers agent is trying to connect to.")
            .register(registry);
    openEndpointConnections =
        Gauge.builder()
            .name(PREFIX + "open_endpoint_connections")
            .help("Current number of open endpoint connections.")
            .register(registry);
    streamPackets =
        Counter.builder()
            .name(PREFIX + "stream_packets_total")
            .help("Count of packets processed, by segment and packet type.")
            .labelNames("segment", "packet_type")
            .register(registry);
    streamErrors =
        Counter.builder()
            .name(PREFIX + "stream_errors_total")
            .help("Count of gRPC stream errors, by segment, grpc status code and packet type.")
            .labelNames("segment", "code", "packet_type")
            .register(registry);
    // Portage only: the wire has no per-connection window, so a backend whose queue overflows is
    // closed on its own instead of stalling the whole server stream (upstream issues #180, #881).
    endpointQueueOverflows =
        Counter.builder()
            .name(PREFIX + "endpoint_queue_overflow_total")
            .help("Endpoint connections closed because their --xfr-channel-size queue overflowed.")
            .register(registry);
    // Portage only: per-connection credit windows negotiated with Portage servers.
    flowControlConnections =
        Gauge.builder()
            .name(PREFIX + "flow_control_server_connections")
            .help("Server connections on which per-connection flow control was negotiated (Portage).")
            .register(registry);
    flowControlPaused =
        Gauge.builder()
            .name(PREFIX + "flow_control_paused_connections")
            .help("Endpoint connections whose reads are paused until the server grants credit (Portage).")
            .register(registry);
    flowControlPauses =
        Counter.builder()
            .name(PREFIX + "flow_control_pauses_total")
            .help("Times an endpoint connection's reads paused for lack of credit from the server (Portage).")
            .register(registry);
    flowControlErrors =
        Counter.builder()
            .name(PREFIX + "flow_control_errors_total")
            .help("Endpoint connections closed because the server broke the flow control protocol (Portage).")
            .register(registry);
    queuePeakBytes =
        Gauge.builder()
            .name(PREFIX + "endpoint_queue_peak_bytes")
            .help("Most bytes any one endpoint connection has held queued toward its endpoint since start (Portage).")
            .register(registry);
    // Upstream's deprecated counter; a gauge here so the name stays without a _total suffix.
    connectionFailures =
        Gauge.builder()
            .name(PREFIX + "server_connection_failure_count")
            .help("Count of failures to send to or receive from the proxy server, labeled by the direction "
                + "(from_server or to_server). DEPRECATED, please use stream_packets_total")
            .labelNames("direction")
            .register(registry);
    leaseLists =
        Counter.builder()
            .name(PREFIX + "lease_lists_total")
            .help("Count of server lease lists, by HTTP response code and reason.")
            .labelNames("http_response_code", "reason")
            .register(registry);
    leaseWatches =
        Counter.builder()
            .name(PREFIX + "lease_watches_total")
            .help("Count of server lease watches, by HTTP response code and reason (Portage lists, it does not watch).")
            .labelNames("http_response_code", "reason")
            .register(registry);
    leaseListLatency =
        Histogram.builder()
            .name(PREFIX + "lease_list_latency_seconds")
            .help("Latency of server lease lists in seconds, by HTTP response code.")
            .classicOnly()
            .classicUpperBounds(BUCKETS)
            .labelNames("http_response_code")
            .register(registry);
    connectionFailures.labelValues("from_server").set(0);
    connectionFailures.labelValues("to_server").set(0);
    flowControlConnections.set(0);
    flowControlPaused.set(0);
    queuePeakBytes.set(0);
  }

  void flowControlConnection(int delta) {
    flowControlConnections.inc(delta);
  }

  void flowControlPaused(int delta) {
    flowControlPaused.inc(delta);
    if (delta > 0) {
      flowControlPauses.inc();
    }
  }

  void flowControlError() {
    flowControlErrors.inc();
  }

  /** One endpoint connection now holds {@code bytes} queued toward its endpoint. */
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

  void dialSucceeded(Duration elapsed) {
    dialDuration.observe(elapsed.toNanos() / 1e9);
  }

  void dialFailed(DialFailure reason) {
    dialFailures.labelValues(reason.label).inc();
  }

  void serverConnections(int n) {
    openServerConnections.set(n);
  }

  void knownServerCount(int n) {
    knownServerCount.set(n);
  }

  void endpointOpened() {
    openEndpointConnections.inc();
  }

  void endpointClosed() {
    openEndpointConnections.dec();
  }

  void packetSent(PacketType type) {
    streamPackets.labelValues(FROM_AGENT, type.name()).inc();
  }

  void packetReceived(PacketType type) {
    streamPackets.labelValues(TO_AGENT, type.name()).inc();
  }

  /** A stream failure while receiving; upstream labels it with an empty packet type. */
  void receiveError(Status status) {
    streamErrors.labelValues(TO_AGENT, GoStatusCodes.name(status.getCode()), "Unknown").inc();
    connectionFailures.labelValues("from_server").inc();
  }

  void sendError(Status status, PacketType type) {
    streamErrors.labelValues(FROM_AGENT, GoStatusCodes.name(status.getCode()), type.name()).inc();
    connectionFailures.labelValues("to_server").inc();
  }

  /**
   * One list of server leases ended with HTTP {@code code} (0: no answer) and Kubernetes status reason
   * {@code reason} ("" on success) after {@code seconds}.
   */
  void leaseList(int code, String reason, double seconds) {
    leaseLists.labelValues(Integer.toString(code), reason).inc();
    leaseListLatency.labelValues(Integer.toString(code)).observe(seconds);
  }

  void endpointQueueOverflow() {
    endpointQueueOverflows.inc();
  }

}
