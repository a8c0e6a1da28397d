package dev.portage.proxy.mesh;

import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;
import dev.portage.core.balance.Endpoint;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.TreeSet;
import java.util.function.IntSupplier;

/**
 * The sidecar's live state for the admin dashboard: requests in flight, then every discovered
 * endpoint with its health, peak-EWMA cost and in-flight requests (read from the destinations'
 * balancers), then every watched ServiceProfile with its routes and what its retry budget allows
 * now. Thread-safe (reads concurrent maps, balancer snapshots and the budget under its own lock).
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "sidecar";
  static final String SUMMARY = "Sidecar";
  static final String ENDPOINTS = "Endpoints";
  static final String PROFILES = "Service profiles";

  private final SidecarConfig config;
  private final Discovery discovery;
  private final Profiles profiles;
  private final IntSupplier inflight;

  DashboardState(SidecarConfig config, Discovery discovery, Profiles profiles, IntSupplier inflight) {
    this.config = config;
    this.discovery = discovery;
    this.profiles = profiles;
    this.inflight = inflight;
  }

  @Override
  public void render(DashboardView view) {
    List<Destination> destinations = discovery.all().stream()
        .sorted((a, b) -> a.authority.compareTo(b.authority)).toList();
    view.fields(SUMMARY)
        .put("destination service", config.destinationAddr())
        .put("balancer", config.balancer().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'))
        .put("requests in flight", inflight.getAsInt())
        .put("discovered authorities", destinations.size())
        .put("watched profiles", profiles.size());
    DashboardView.Table endpoints = view.table(ENDPOINTS,
        "authority", "endpoint", "healthy", "in flight", "ewma cost ms", "fail-fast");
    for (Destination d : destinations) {
      boolean failFast = d.inFailFast();
      for (Endpoint<InetSocketAddress> e : d.balancer.endpoints()) {
        endpoints.row(d.authority, e.id(), e.isHealthy(), e.inFlight(), millis(d.balancer.costNanos(e)), failFast);
      }
    }
    DashboardView.Table table = view.table(PROFILES,
        "authority", "routes", "retryable routes", "retry budget", "retries available");
    for (String authority : new TreeSet<>(profiles.authorities())) {
      ProfileSnapshot p = profiles.peek(authority);
      RetryBudget budget = p.budget();
      table.row(authority, p.routes().size(), p.routes().stream().filter(RouteSnapshot::retryable).count(),
          budget != null, budget == null ? null : round(budget.availableRetries()));
    }
  }

  /** Milliseconds with three decimals; null when the balancer does not weigh by cost. */
  private static Double millis(double nanos) {
    return Double.isNaN(nanos) ? null : round(nanos / 1e6);
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
