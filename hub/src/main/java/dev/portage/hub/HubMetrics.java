package dev.portage.hub;

import dev.portage.core.balance.Endpoint;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.local.LocalProxy;
import dev.portage.hub.remote.ApiServer;
import dev.portage.hub.remote.Upstreams;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The hub's metrics, all named {@code portage_hub_*}: upstream health per server, requests by
 * verb/resource/code, answers served from the cache, cache size by component, cache faults,
 * requests in flight and requests refused by the in-flight limit. Thread-safe.
 */
final class HubMetrics {

  private static final String PREFIX = "portage_hub_";

  private final Counter requests;
  private final Counter rejected;

  HubMetrics(PrometheusRegistry registry, Upstreams upstreams, DiskCache cache, LocalProxy local,
      IntSupplier inFlight, LongSupplier uncachedResponses, IntSupplier runningExchanges) {
    requests = Counter.builder()
        .name(PREFIX + "requests_total")
        .help("Requests proxied or answered by the hub, by verb, resource and HTTP code.")
        .labelNames("verb", "resource", "code")
        .withoutExemplars() // no trace context here; the sampler cost more than the count itself
        .register(registry);
    rejected = Counter.builder()
        .name(PREFIX + "rejected_requests_total")
        .help("Requests refused with 429 because --max-requests-in-flight was reached.")
        .withoutExemplars()
        .register(registry);
    GaugeWithCallback.builder()
        .name(PREFIX + "upstream_healthy")
        .help("1 when the API server passes its health checks, else 0.")
        .labelNames("server")
        .callback(cb -> {
          for (Endpoint<ApiServer> e : upstreams.endpoints()) {
            cb.call(e.isHealthy() ? 1 : 0, e.id());
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name(PREFIX + "served_from_cache_total")
        .help("Requests answered from the local cache while the cloud was unreachable.")
        .callback(cb -> cb.call(local.servedFromCache()))
        .register(registry);
    GaugeWithCallback.builder()
        .name(PREFIX + "cache_size_bytes")
        .help("Bytes of the disk cache, by component.")
        .labelNames("component")
        .callback(cb -> {
          for (String c : cache.components()) {
            cb.call(cache.sizeBytes(c), c);
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name(PREFIX + "cache_corrupt_files_total")
        .help("Cache files found truncated or corrupt (skipped, never served).")
        .callback(cb -> cb.call(cache.corruptFiles()))
        .register(registry);
    CounterWithCallback.builder()
        .name(PREFIX + "cache_write_failures_total")
        .help("Cache writes that failed (full disk, I/O error); the previous version was kept.")
        .callback(cb -> cb.call(cache.writeFailures()))
        .register(registry);
    CounterWithCallback.builder()
        .name(PREFIX + "uncached_responses_total")
        .help("Cacheable answers relayed but not stored (over 64 MiB, or the cache writer's backlog"
            + " was full).")
        .callback(cb -> cb.call(uncachedResponses.getAsLong()))
        .register(registry);
    GaugeWithCallback.builder()
        .name(PREFIX + "inflight_requests")
        .help("Non-long-running requests in flight (the --max-requests-in-flight count).")
        .callback(cb -> cb.call(inFlight.getAsInt()))
        .register(registry);
    GaugeWithCallback.builder()
        .name(PREFIX + "upstream_exchanges")
        .help("Exchanges with the API server running for connected clients (answers being relayed,"
            + " watches).")
        .callback(cb -> cb.call(runningExchanges.getAsInt()))
        .register(registry);
    GaugeWithCallback.builder()
        .name(PREFIX + "held_watches")
        .help("Watches held open by the local proxy while the cloud is unreachable.")
        .callback(cb -> cb.call(local.heldWatches()))
        .register(registry);
  }

  /** A counter of requests for one client connection; see {@link RequestCounter}. */
  RequestCounter requestCounter() {
    return new RequestCounter();
  }

  /**
   * Counts one connection's requests, keeping the data point of the last verb, resource and code:
   * a kubelet's connection asks the same thing again and again, and each label lookup builds a
   * list and a code string. Confined to the connection's event loop.
   */
  final class RequestCounter {
    private String verb;
    private String resource;
    private int code;
    private CounterDataPoint point;

    private RequestCounter() {}

    void count(String verb, String resource, int code) {
      CounterDataPoint p = point;
      if (p == null || code != this.code || !verb.equals(this.verb)
          || !resource.equals(this.resource)) {
        p = requests.labelValues(verb, resource.isEmpty() ? "-" : resource,
            Integer.toString(code));
        this.verb = verb;
        this.resource = resource;
        this.code = code;
        point = p;
      }
      p.inc();
    }
  }

  void rejected() {
    rejected.inc();
  }
}
