package dev.portage.hub;

import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;
import dev.portage.core.balance.Endpoint;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.local.LocalProxy;
import dev.portage.hub.remote.ApiServer;
import dev.portage.hub.remote.Upstreams;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * The edge hub's live state for the admin dashboard: online or offline (whether any API server is
 * healthy), requests in flight and what the cache answered, then each API server's health, then the
 * disk cache's size by component. Reads the same live sources as the hub's metrics; the cache sizes
 * walk the cache directory, as a metrics scrape does. Thread-safe.
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "edge-hub";
  static final String SUMMARY = "Hub";
  static final String UPSTREAMS = "API servers";
  static final String CACHE = "Cache by component";

  private final EdgeHubConfig config;
  private final Upstreams upstreams;
  private final DiskCache cache;
  private final LocalProxy local;
  private final IntSupplier inFlight;

  DashboardState(EdgeHubConfig config, Upstreams upstreams, DiskCache cache, LocalProxy local, IntSupplier inFlight) {
    this.config = config;
    this.upstreams = upstreams;
    this.cache = cache;
    this.local = local;
    this.inFlight = inFlight;
  }

  @Override
  public void render(DashboardView view) {
    boolean online = upstreams.anyHealthy();
    List<String> components = cache.components();
    long total = 0;
    long[] sizes = new long[components.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = cache.sizeBytes(components.get(i));
      total += sizes[i];
    }
    view.fields(SUMMARY)
        .put("mode", online ? "online" : "offline")
        .put("online", online)
        .put("node", config.nodeName())
        .put("node pool", config.nodePoolName())
        .put("working mode", config.workingMode().name().toLowerCase(java.util.Locale.ROOT))
        .put("load balancing", config.lbMode().toString())
        .put("requests in flight", inFlight.getAsInt())
        .put("held watches", local.heldWatches())
        .put("served from cache", local.servedFromCache())
        .put("cache directory", cache.root().toString())
        .put("cache bytes", total)
        .put("cache corrupt files", cache.corruptFiles())
        .put("cache write failures", cache.writeFailures());
    DashboardView.Table servers = view.table(UPSTREAMS, "server", "healthy", "in flight");
    for (Endpoint<ApiServer> e : upstreams.endpoints()) {
      servers.row(e.id(), e.isHealthy(), e.inFlight());
    }
    DashboardView.Table table = view.table(CACHE, "component", "bytes");
    for (int i = 0; i < sizes.length; i++) {
      table.row(components.get(i), sizes[i]);
    }
  }
}
