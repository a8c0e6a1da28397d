package dev.portage.proxy.mesh;

import dev.portage.core.balance.Endpoint;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.Collector;
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
 *   <tr><td>portage_sidecar_endpoint_ready</td><td>authority, endpoint</td><td>1 when the balancer may pick the endpoint, 0 while it is unreachable (reconnecting), shut by failure accrual or unhealthy</td></tr>
 *   <tr><td>portage_sidecar_endpoint_connect_failures_total</td><td>authority, endpoint</td><td>connects that failed (each makes the endpoint unreachable until a reconnect succeeds)</td></tr>
 * </table>
 *
 * <p>Linkerd's proxy metrics, per endpoint attempt, with Linkerd's outbound target labels ({@code
 * direction="outbound", authority, target_addr, target_ip, target_port, tls="disabled"}):
 * {@code request_total} (at the request's dispatch), {@code response_latency_ms} (histogram in ms
 * with Linkerd's buckets, to the response head, + {@code status_code}), {@code response_total} (at the
 * response's end, + {@code status_code, classification, grpc_status, error}), and the balancer gauge
 * {@code outbound_http_balancer_endpoints{authority, endpoint_state="ready"|"pending"}}.
 *
 * Histograms are classic only (the text exposition shows nothing else; a native histogram costs
 * more per observation). The families counted on every request count per thread and add up at the
 * scrape ({@link PerThreadCounter}, {@link PerThreadHistogram}: the same exposition). The data points
 * of each route and endpoint are looked up once and cached. Thread-safe.
 */
final class SidecarMetrics {

  private final PrometheusRegistry registry;
  private final PerThreadCounter routeRequests;
  private final PerThreadHistogram routeLatency;
  private final Counter retries;
  private final Counter budgetExhausted;
  private final PerThreadCounter endpointRequests;
  private final PerThreadHistogram endpointLatency;
  private final Counter failFast;
  private final GaugeWithCallback inFlight;
  private final GaugeWithCallback ewma;
  private final GaugeWithCallback budgetAvailable;
  private final GaugeWithCallback endpointReady;
  private final Counter connectFailures;
  private final PerThreadCounter requestTotal;
  private final PerThreadHistogram responseLatencyMs;
  private final PerThreadCounter responseTotal;
  private final GaugeWithCallback balancerEndpoints;
  private final Map<String, Map<String, RouteMetrics>> routes = new ConcurrentHashMap<>();
  private final Map<String, Map<String, EndpointMetrics>> endpoints = new ConcurrentHashMap<>();

  SidecarMetrics(PrometheusRegistry registry, Discovery discovery, Profiles profiles) {
    this.registry = registry;
    // The families counted on every request count per thread (PerThreadCounter/PerThreadHistogram):
    // the event loops would otherwise share their cells' cache lines.
    routeRequests = register(new PerThreadCounter("portage_sidecar_route_requests_total",
        "Responses sent to clients per route", "authority", "route", "status_class"));
    routeLatency = register(new PerThreadHistogram(Histogram.builder()
        .name("portage_sidecar_route_response_latency_seconds")
        .help("Request start to response head per route, retries included"), "authority", "route"));
    retries = Counter.builder().name("portage_sidecar_route_retries_total")
        .help("Retries sent per route").labelNames("authority", "route").register(registry);
    budgetExhausted = Counter.builder().name("portage_sidecar_retry_budget_exhausted_total")
        .help("Retries skipped because the retry budget was spent").labelNames("authority", "route").register(registry);
    endpointRequests = register(new PerThreadCounter("portage_sidecar_endpoint_requests_total",
        "Attempts per endpoint", "authority", "endpoint", "status_class"));
    endpointLatency = register(new PerThreadHistogram(Histogram.builder()
        .name("portage_sidecar_endpoint_response_latency_seconds").help("Dispatch to response head per endpoint"),
        "authority", "endpoint"));
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
    endpointReady = GaugeWithCallback.builder().name("portage_sidecar_endpoint_ready")
        .help("1 when the endpoint may be picked; 0 while unreachable, shut by failure accrual or unhealthy")
        .labelNames("authority", "endpoint")
        .callback(cb -> {
          for (Destination d : discovery.all()) {
            for (Endpoint<InetSocketAddress> e : d.balancer.endpoints()) {
              cb.call(e.isReady() ? 1 : 0, d.authority, e.id());
            }
          }
        })
        .register(registry);
    connectFailures = Counter.builder().name("portage_sidecar_endpoint_connect_failures_total")
        .help("Connects to an endpoint that failed").labelNames("authority", "endpoint").register(registry);
    requestTotal = register(new PerThreadCounter("request_total",
        "Requests dispatched to endpoints (Linkerd's name)", TARGET_LABELS));
    responseLatencyMs = register(new PerThreadHistogram(Histogram.builder().name("response_latency_ms")
        .help("Request dispatch to response head, in milliseconds (Linkerd's name and buckets)")
        .classicUpperBounds(LINKERD_LATENCY_BUCKETS_MS), withLabels("status_code")));
    responseTotal = register(new PerThreadCounter("response_total",
        "Responses from endpoints by classification (Linkerd's name)",
        withLabels("status_code", "classification", "grpc_status", "error")));
    balancerEndpoints = GaugeWithCallback.builder().name("outbound_http_balancer_endpoints")
        .help("Endpoints per balancer by state (Linkerd's name; pending: not ready)")
        .labelNames("authority", "endpoint_state")
        .callback(cb -> {
          for (Destination d : discovery.all()) {
            int ready = 0;
            int all = 0;
            for (Endpoint<InetSocketAddress> e : d.balancer.endpoints()) {
              all++;
              if (e.isReady()) {
                ready++;
              }
            }
            cb.call(ready, d.authority, "ready");
            cb.call(all - ready, d.authority, "pending");
          }
        })
        .register(registry);
  }

  private <C extends Collector> C register(C collector) {
    registry.register(collector);
    return collector;
  }

  /** Linkerd's outbound target labels, in the order {@link EndpointMetrics} gives their values. */
  private static final String[] TARGET_LABELS =
      {"direction", "authority", "target_addr", "target_ip", "target_port", "tls"};

  /** Linkerd's {@code response_latency_ms} buckets. */
  static final double[] LINKERD_LATENCY_BUCKETS_MS = {
      1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 100, 200, 300, 400, 500, 1000, 2000, 3000, 4000, 5000,
      10000, 20000, 30000, 40000, 50000};

  private static String[] withLabels(String... more) {
    String[] all = java.util.Arrays.copyOf(TARGET_LABELS, TARGET_LABELS.length + more.length);
    System.arraycopy(more, 0, all, TARGET_LABELS.length, more.length);
    return all;
  }

  /** The data points of one endpoint of {@code authority}, resolved once; hold it for one request. */
  EndpointMetrics endpoint(String authority, String endpointId, InetSocketAddress address) {
    Map<String, EndpointMetrics> byId = endpoints.get(authority);
    if (byId == null) {
      byId = endpoints.computeIfAbsent(authority, a -> new ConcurrentHashMap<>());
    }
    EndpointMetrics m = byId.get(endpointId);
    if (m == null) {
      m = byId.computeIfAbsent(endpointId, id -> new EndpointMetrics(authority, id, address));
    }
    return m;
  }

  void retry(String authority, String route) {
    route(authority, route).retries.get().inc();
  }

  void budgetExhausted(String authority, String route) {
    route(authority, route).budgetExhausted.get().inc();
  }


  void failFast(String authority) {
    failFast.labelValues(authority).inc();
  }

  /** The data points of one route of {@code authority}, resolved once; may be held and reused. */
  RouteMetrics route(String authority, String route) {
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
    private final Function<String, PerThreadCounter.Series> lookup;
    private final List<LazyPoint<PerThreadCounter.Series>> classes = new ArrayList<>(6); // [0]: "error"

    ByStatusClass(Function<String, PerThreadCounter.Series> lookup) {
      this.lookup = lookup;
      classes.add(new LazyPoint<>(() -> lookup.apply("error")));
      for (int c = 1; c <= 5; c++) {
        String label = c + "xx";
        classes.add(new LazyPoint<>(() -> lookup.apply(label)));
      }
    }

    PerThreadCounter.Series get(int status) {
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
  final class RouteMetrics {
    final ByStatusClass requests;
    final LazyPoint<PerThreadHistogram.Series> latency;
    final LazyPoint<CounterDataPoint> retries;
    final LazyPoint<CounterDataPoint> budgetExhausted;

    RouteMetrics(String authority, String route) {
      requests = new ByStatusClass(c -> routeRequests.labelValues(authority, route, c));
      latency = new LazyPoint<>(() -> routeLatency.labelValues(authority, route));
      retries = new LazyPoint<>(() -> SidecarMetrics.this.retries.labelValues(authority, route));
      budgetExhausted =
          new LazyPoint<>(() -> SidecarMetrics.this.budgetExhausted.labelValues(authority, route));
    }

    /** A response sent to the client after {@code nanos}: counted by status class, latency observed. */
    void response(int status, long nanos) {
      requests.get(status).inc();
      latency.get().observe(nanos / 1e9);
    }
  }

  /**
   * The data points of one endpoint of one authority, ours and Linkerd's, resolved on first use. The
   * balance layer fetches it once per request and reports the request's steps to it.
   */
  final class EndpointMetrics {
    private final String authority;
    private final String endpoint;
    private final String[] target; // Linkerd's target label values
    private final ByStatusClass requests;
    private final LazyPoint<PerThreadHistogram.Series> latency;
    private final LazyPoint<PerThreadCounter.Series> linkerdRequests;
    private final LazyPoint<CounterDataPoint> connectFailed;
    private final IntKeyedPoints<PerThreadHistogram.Series> latencyMsByStatus;
    private final IntKeyedPoints<PerThreadCounter.Series> responsesByKey;

    EndpointMetrics(String authority, String endpoint, InetSocketAddress address) {
      this.authority = authority;
      this.endpoint = endpoint;
      String ip = address.getAddress() == null ? address.getHostString() : address.getAddress().getHostAddress();
      target = new String[] {"outbound", authority, endpoint, ip, Integer.toString(address.getPort()), "disabled"};
      requests = new ByStatusClass(c -> endpointRequests.labelValues(authority, endpoint, c));
      latency = new LazyPoint<>(() -> endpointLatency.labelValues(authority, endpoint));
      linkerdRequests = new LazyPoint<>(() -> requestTotal.labelValues(target));
      connectFailed = new LazyPoint<>(() -> connectFailures.labelValues(authority, endpoint));
      latencyMsByStatus = new IntKeyedPoints<>(
          status -> responseLatencyMs.labelValues(labels(Integer.toString(status))));
      responsesByKey = new IntKeyedPoints<>(this::responsePoint);
    }

    /** A request dispatched to this endpoint ({@code request_total}). */
    void request() {
      linkerdRequests.get().inc();
    }

    /** A response head after {@code nanos} from dispatch. */
    void head(int status, long nanos) {
      requests.get(status).inc();
      latency.get().observe(nanos / 1e9);
      latencyMsByStatus.get(status).observe(nanos / 1e6);
    }

    /** No response: the attempt failed before a head ({@code status_class="error"}). */
    void noResponse(boolean connectFailure) {
      requests.get(-1).inc();
      if (connectFailure) {
        connectFailed.get().inc();
      }
      response(-1, true, GrpcStatus.NONE, true);
    }

    /**
     * A response's end ({@code response_total}).
     *
     * @param status the head's status, or -1 when there was none
     * @param grpcStatus the response's grpc-status or {@link GrpcStatus#NONE}
     * @param error the exchange broke (no head, or the upstream failed mid-body)
     */
    void response(int status, boolean failure, int grpcStatus, boolean error) {
      if (status < -1 || status > 999 || grpcStatus < GrpcStatus.NONE || grpcStatus > 30) {
        responsePoint(key(Math.max(-1, Math.min(999, status)), failure, GrpcStatus.NONE, error)).inc();
        return;
      }
      responsesByKey.get(key(status, failure, grpcStatus, error)).inc();
    }

    private static int key(int status, boolean failure, int grpcStatus, boolean error) {
      return (((status + 1) * 32 + (grpcStatus + 1)) * 2 + (failure ? 1 : 0)) * 2 + (error ? 1 : 0);
    }

    private PerThreadCounter.Series responsePoint(int key) {
      boolean error = (key & 1) != 0;
      boolean failure = (key & 2) != 0;
      int grpc = (key >> 2) % 32 - 1;
      int status = (key >> 2) / 32 - 1;
      return responseTotal.labelValues(labels(
          status < 0 ? "" : Integer.toString(status), failure ? "failure" : "success",
          grpc < 0 ? "" : Integer.toString(grpc), error ? "unclassified" : ""));
    }

    private String[] labels(String... more) {
      String[] all = java.util.Arrays.copyOf(target, target.length + more.length);
      System.arraycopy(more, 0, all, target.length, more.length);
      return all;
    }

    @Override
    public String toString() {
      return "EndpointMetrics{" + authority + " " + endpoint + '}';
    }
  }

  /**
   * Data points looked up by a small int key (a status code, a packed label set), the last one kept
   * for the next call: one endpoint answers the same status almost every time.
   */
  private static final class IntKeyedPoints<P> {
    private record Last<P>(int key, P point) {}

    private final java.util.function.IntFunction<P> lookup;
    private final Map<Integer, P> points = new ConcurrentHashMap<>();
    private volatile Last<P> last;

    IntKeyedPoints(java.util.function.IntFunction<P> lookup) {
      this.lookup = lookup;
    }

    P get(int key) {
      Last<P> l = last;
      if (l != null && l.key == key) {
        return l.point;
      }
      P p = points.computeIfAbsent(key, lookup::apply);
      last = new Last<>(key, p);
      return p;
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
    registry.unregister(endpointReady);
    registry.unregister(connectFailures);
    registry.unregister(requestTotal);
    registry.unregister(responseLatencyMs);
    registry.unregister(responseTotal);
    registry.unregister(balancerEndpoints);
  }
}
