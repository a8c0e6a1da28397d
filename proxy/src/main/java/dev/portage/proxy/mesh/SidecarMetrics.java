package dev.portage.proxy.mesh;

import dev.portage.core.balance.Endpoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;

/**
 * The sidecar's metrics, per route (authority + route name) and per endpoint.
 *
 * <table>
 *   <caption>Metrics</caption>
 *   <tr><th>name</th><th>labels</th><th>meaning</th></tr>
 *   <tr><td>portage_sidecar_route_requests_total</td><td>authority, route, status_class</td><td>responses sent to clients (status class 1xx..5xx)</td></tr>
 *   <tr><td>portage_sidecar_route_response_latency_seconds</td><td>authority, route</td><td>request start to response head, retries included</td></tr>
 *   <tr><td>portage_sidecar_route_retries_total</td><td>authority, route</td><td>retries sent</td></tr>
 *   <tr><td>portage_sidecar_retry_budget_exhausted_total</td><td>authority, route</td><td>retries skipped because the budget was spent</td></tr>
 *   <tr><td>portage_sidecar_endpoint_requests_total</td><td>authority, endpoint, status_class</td><td>attempts per endpoint (status_class "error" when none came back)</td></tr>
 *   <tr><td>portage_sidecar_endpoint_response_latency_seconds</td><td>authority, endpoint</td><td>dispatch to response head (the RTT peak-EWMA sees)</td></tr>
 *   <tr><td>portage_sidecar_endpoint_in_flight</td><td>authority, endpoint</td><td>picks not completed</td></tr>
 *   <tr><td>portage_sidecar_endpoint_ewma_seconds</td><td>authority, endpoint</td><td>the balancer's peak-EWMA latency estimate, decayed to the scrape (p2c-ewma only); cost = this × (in flight + 1)</td></tr>
 *   <tr><td>portage_sidecar_fail_fast_total</td><td>authority</td><td>requests refused with 503 while in fail-fast</td></tr>
 *   <tr><td>portage_sidecar_retry_budget_available</td><td>authority</td><td>retries the profile's retry budget allows now (profiles with a valid budget)</td></tr>
 * </table>
 *
 * Thread-safe.
 */
final class SidecarMetrics {

  private final PrometheusRegistry registry;
  private final Counter routeRequests;
  private final Histogram routeLatency;
  private final Counter retries;
  private final Counter budgetExhausted;
  private final Counter endpointRequests;
  private final Histogram endpointLatency;
  private final Counter failFast;
  private final GaugeWithCallback inFlight;
  private final GaugeWithCallback ewma;
  private final GaugeWithCallback budgetAvailable;

  SidecarMetrics(PrometheusRegistry registry, Discovery discovery, Profiles profiles) {
    this.registry = registry;
    routeRequests = Counter.builder().name("portage_sidecar_route_requests_total")
        .help("Responses sent to clients per route").labelNames("authority", "route", "status_class").register(registry);
    routeLatency = Histogram.builder().name("portage_sidecar_route_response_latency_seconds")
        .help("Request start to response head per route, retries included").labelNames("authority", "route")
        .register(registry);
    retries = Counter.builder().name("portage_sidecar_route_retries_total")
        .help("Retries sent per route").labelNames("authority", "route").register(registry);
    budgetExhausted = Counter.builder().name("portage_sidecar_retry_budget_exhausted_total")
        .help("Retries skipped because the retry budget was spent").labelNames("authority", "route").register(registry);
    endpointRequests = Counter.builder().name("portage_sidecar_endpoint_requests_total")
        .help("Attempts per endpoint").labelNames("authority", "endpoint", "status_class").register(registry);
    endpointLatency = Histogram.builder().name("portage_sidecar_endpoint_response_latency_seconds")
        .help("Dispatch to response head per endpoint").labelNames("authority", "endpoint").register(registry);
    failFast = Counter.builder().name("portage_sidecar_fail_fast_total")
        .help("Requests refused with 503 while the destination was in fail-fast").labelNames("authority")
        .register(registry);
    inFlight = GaugeWithCallback.builder().name("portage_sidecar_endpoint_in_flight")
        .help("Requests in flight per endpoint").labelNames("authority", "endpoint")
        .callback(cb -> {
          for (Destination d : discovery.all()) {
            for (Endpoint<InetSocketAddress> e : d.balancer.endpoints()) {
              cb.call(e.inFlight(), d.authority, e.id());
            }
          }
        })
        .register(registry);
    ewma = GaugeWithCallback.builder().name("portage_sidecar_endpoint_ewma_seconds")
        .help("Peak-EWMA latency estimate per endpoint, decayed to now")
        .labelNames("authority", "endpoint")
        .callback(cb -> {
          for (Destination d : discovery.all()) {
            for (Endpoint<InetSocketAddress> e : d.balancer.endpoints()) {
              double nanos = d.balancer.latencyEstimateNanos(e);
              if (!Double.isNaN(nanos)) {
                cb.call(nanos / 1e9, d.authority, e.id());
              }
            }
          }
        })
        .register(registry);
    budgetAvailable = GaugeWithCallback.builder().name("portage_sidecar_retry_budget_available")
        .help("Retries the service profile's retry budget allows now").labelNames("authority")
        .callback(cb -> profiles.forEachCurrent((authority, profile) -> {
          if (profile.budget() != null) {
            cb.call(profile.budget().availableRetries(), authority);
          }
        }))
        .register(registry);
  }

  void routeResponse(String authority, String route, String statusClass, long nanos) {
    routeRequests.labelValues(authority, route, statusClass).inc();
    routeLatency.labelValues(authority, route).observe(nanos / 1e9);
  }

  void retry(String authority, String route) {
    retries.labelValues(authority, route).inc();
  }

  void budgetExhausted(String authority, String route) {
    budgetExhausted.labelValues(authority, route).inc();
  }

  void endpointResponse(String authority, String endpoint, String statusClass, long nanos) {
    endpointRequests.labelValues(authority, endpoint, statusClass).inc();
    if (nanos >= 0) {
      endpointLatency.labelValues(authority, endpoint).observe(nanos / 1e9);
    }
  }

  void failFast(String authority) {
    failFast.labelValues(authority).inc();
  }

  static String statusClass(int status) {
    return (status / 100) + "xx";
  }

  void unregister() {
    registry.unregister(routeRequests);
    registry.unregister(routeLatency);
    registry.unregister(retries);
    registry.unregister(budgetExhausted);
    registry.unregister(endpointRequests);
    registry.unregister(endpointLatency);
    registry.unregister(failFast);
    registry.unregister(inFlight);
    registry.unregister(ewma);
    registry.unregister(budgetAvailable);
  }
}
