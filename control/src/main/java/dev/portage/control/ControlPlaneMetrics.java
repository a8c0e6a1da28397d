package dev.portage.control;

import dev.portage.control.source.Kinds;
import dev.portage.control.source.Source;
import dev.portage.control.store.ResourceStore;
import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The control plane's own metrics, beside the rule server's ({@code portage_rules_*}) and the
 * destination server's ({@code portage_destination_*}): the store revision and object counts, source
 * readiness, and open gRPC connections. Store gauges are read at scrape time. Registered on
 * construction, unregistered by {@link #unregister()}. Thread-safe.
 */
final class ControlPlaneMetrics {

  private static final Attributes.Key<Boolean> COUNTED = Attributes.Key.create("portage.control.counted");

  private final PrometheusRegistry registry;
  private final GaugeWithCallback storeRevision;
  private final GaugeWithCallback storeObjects;
  private final GaugeWithCallback sourceSynced;
  private final Gauge grpcConnections;
  private final AtomicInteger openConnections = new AtomicInteger();

  ControlPlaneMetrics(PrometheusRegistry registry, ResourceStore store, Source source) {
    this.registry = registry;
    storeRevision =
        GaugeWithCallback.builder()
            .name("portage_control_store_revision")
            .help("revision of the latest change in the control plane's store")
            .callback(cb -> cb.call(store.revision()))
            .register(registry);
    storeObjects =
        GaugeWithCallback.builder()
            .name("portage_control_store_objects")
            .help("objects in the store, by kind")
            .labelNames("kind")
            .callback(
                cb -> {
                  for (String kind : Kinds.ALL) {
                    cb.call(store.list(kind).items().size(), kind);
                  }
                })
            .register(registry);
    sourceSynced =
        GaugeWithCallback.builder()
            .name("portage_control_source_synced")
            .help("1 once the source has loaded its initial state into the store")
            .callback(cb -> cb.call(source.isSynced() ? 1 : 0))
            .register(registry);
    grpcConnections =
        Gauge.builder()
            .name("portage_control_grpc_connections")
            .help("open client connections (HTTP/2 transports) on the gRPC port")
            .register(registry);
  }

  /** Counts transports as they become ready and terminate. */
  ServerTransportFilter transportFilter() {
    return new ServerTransportFilter() {
      @Override
      public Attributes transportReady(Attributes attrs) {
        openConnections.incrementAndGet();
        grpcConnections.inc();
        return attrs.toBuilder().set(COUNTED, Boolean.TRUE).build();
      }

      @Override
      public void transportTerminated(Attributes attrs) {
        // Attributes are null, or lack the mark, for a transport that never became ready.
        if (attrs == null || attrs.get(COUNTED) == null) {
          return;
        }
        openConnections.decrementAndGet();
        grpcConnections.dec();
      }
    };
  }

  int grpcConnections() {
    return openConnections.get();
  }

  void unregister() {
    registry.unregister(storeRevision);
    registry.unregister(storeObjects);
    registry.unregister(sourceSynced);
    registry.unregister(grpcConnections);
  }
}
