package dev.portage.proxy.mesh;

import dev.portage.core.balance.Endpoint;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

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
 * Histograms are classic only (the text exposition shows nothing else; a native histogram costs
 * more per observation). The data points of each route and endpoint are looked up once and cached.
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
  private final Map<String, Map<String, RouteMetrics>> routes = new ConcurrentHashMap<>();
  private final Map<String, Map<String, EndpointMetrics>> endpoints = new ConcurrentHashMap<>();

  SidecarMetrics(PrometheusRegistry registry, Discovery discovery, Profiles profiles) {
    this.registry = registry;
    routeRequests = Counter.builder().name("portage_sidecar_route_requests_total")
        .help("Responses sent to clients per route").labelNames("authority", "route", "status_class").register(registry);
    routeLatency = Histogram.builder().name("portage_sidecar_route_response_latency_seconds")
        .help("Request start to response head per route, retries included").labelNames("authority", "route")
        .classicOnly().register(registry);
    retries = Counter.builder().name("portage_sidecar_route_retries_total")
        .help("Retries sent per route").labelNames("authority", "route").register(registry);
    budgetExhausted = Counter.builder().name("portage_sidecar_retry_budget_exhausted_total")
        .help("Retries skipped because the retry budget was spent").labelNames("authority", "route").register(registry);
    endpointRequests = Counter.builder().name("portage_sidecar_endpoint_requests_total")
        .help("Attempts per endpoint").labelNames("authority", "endpoint", "status_class").register(registry);
    endpointLatency = Histogram.builder().name("portage_sidecar_endpoint_response_latency_seconds")
        .help("Dispatch to response head per endpoint").labelNames("authority", "endpoint")
        .classicOnly().register(registry);
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

  /** A response sent to the client: counted by status class, latency observed. */
  void routeResponse(String authority, String route, int status, long nanos) {
    RouteMetrics m = route(authority, route);
    m.requests.get(status).inc();
    m.latency.get().observe(nanos / 1e9);
  }

  void retry(String authority, String route) {
    route(authority, route).retries.get().inc();
  }

  void budgetExhausted(String authority, String route) {
    route(authority, route).budgetExhausted.get().inc();
  }

  /**
   * An attempt's outcome at an endpoint.
   *
   * @param status the response status, or {@code -1} when no response came back ("error")
   * @param nanos dispatch to response head; ignored when {@code status} is -1
   */
  void endpointResponse(String authority, String endpoint, int status, long nanos) {
    EndpointMetrics m = children(endpoints, authority, endpoint, EndpointMetrics::new);
    m.requests.get(status).inc();
    if (status >= 0 && nanos >= 0) {
      m.latency.get().observe(nanos / 1e9);
    }
  }

  void failFast(String authority) {
    failFast.labelValues(authority).inc();
  }

  private RouteMetrics route(String authority, String route) {
    return children(routes, authority, route, RouteMetrics::new);
  }

  /**
   * The cached data points of {@code (authority, name)}, made on first use. A label lookup in the
   * Prometheus client allocates and hashes its label values on every call; these two map reads on
   * strings with cached hashes do neither, and the data points are the very same objects.
   */
  private static <T> T children(
      Map<String, Map<String, T>> cache, String authority, String name,
      BiFunction<String, String, T> make) {
    Map<String, T> byName = cache.get(authority);
    if (byName == null) {
      byName = cache.computeIfAbsent(authority, a -> new ConcurrentHashMap<>());
    }
    T m = byName.get(name);
    if (m == null) {
      m = byName.computeIfAbsent(name, n -> make.apply(authority, n));
    }
    return m;
  }

  /** A data point looked up on first use and kept; a race only repeats the idempotent lookup. */
  private static final class LazyPoint<T> {
    private final Supplier<T> lookup;
    private volatile T point;

    LazyPoint(Supplier<T> lookup) {
      this.lookup = lookup;
    }

    T get() {
      T p = point;
      if (p == null) {
        p = lookup.get();
        point = p;
      }
      return p;
    }
  }

  /**
   * Counters of one series by status class: 1xx..5xx and "error" (no response, status -1) are
   * cached; any other status is looked up each time (its class label is not one of six).
   */
  private static final class ByStatusClass {
    private final Function<String, CounterDataPoint> lookup;
    private final List<LazyPoint<CounterDataPoint>> classes = new ArrayList<>(6); // [0]: "error"

    ByStatusClass(Function<String, CounterDataPoint> lookup) {
      this.lookup = lookup;
      classes.add(new LazyPoint<>(() -> lookup.apply("error")));
      for (int c = 1; c <= 5; c++) {
        String label = c + "xx";
        classes.add(new LazyPoint<>(() -> lookup.apply(label)));
      }
    }

    CounterDataPoint get(int status) {
      if (status < 0) {
        return classes.get(0).get();
      }
      int c = status / 100;
      return c >= 1 && c <= 5 ? classes.get(c).get() : lookup.apply(statusClass(status));
    }
  }

  /**
   * The data points of one route. Each is resolved on first use only, so a series appears in the
   * exposition when it is first counted, as with a direct label lookup.
   */
  private final class RouteMetrics {
    final ByStatusClass requests;
    final LazyPoint<DistributionDataPoint> latency;
    final LazyPoint<CounterDataPoint> retries;
    final LazyPoint<CounterDataPoint> budgetExhausted;

    RouteMetrics(String authority, String route) {
      requests = new ByStatusClass(c -> routeRequests.labelValues(authority, route, c));
      latency = new LazyPoint<>(() -> routeLatency.labelValues(authority, route));
      retries = new LazyPoint<>(() -> SidecarMetrics.this.retries.labelValues(authority, route));
      budgetExhausted =
          new LazyPoint<>(() -> SidecarMetrics.this.budgetExhausted.labelValues(authority, route));
    }
  }

  /** The data points of one endpoint of one authority, resolved on first use. */
  private final class EndpointMetrics {
    final ByStatusClass requests;
    final LazyPoint<DistributionDataPoint> latency;

    EndpointMetrics(String authority, String endpoint) {
      requests = new ByStatusClass(c -> endpointRequests.labelValues(authority, endpoint, c));
      latency = new LazyPoint<>(() -> endpointLatency.labelValues(authority, endpoint));
    }
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
