package dev.portage.proxy.mesh;

import com.google.protobuf.util.Durations;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.Route;
import dev.portage.api.linkerd.destination.WeightedDst;
import dev.portage.core.time.Ticker;
import io.netty.handler.codec.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A destination's service profile as the sidecar uses it: compiled routes (first match wins), the
 * profile's one retry budget (null when its settings are invalid, which makes every route
 * non-retryable), and the traffic split ({@code dst_overrides} with weight 0 dropped). Immutable
 * apart from the budget's counters.
 */
record ProfileSnapshot(List<RouteSnapshot> routes, RetryBudget budget, List<WeightedDst> overrides) {

  private static final Logger log = LoggerFactory.getLogger(ProfileSnapshot.class);

  /** No routes, no split, no retries: what a destination uses before its profile arrives. */
  static final ProfileSnapshot DEFAULT = new ProfileSnapshot(List.of(), null, List.of());

  static ProfileSnapshot of(DestinationProfile p, Ticker ticker) {
    RetryBudget budget = null;
    if (p.hasRetryBudget()) {
      double ratio = p.getRetryBudget().getRetryRatio();
      Duration ttl = Duration.ofNanos(Durations.toNanos(p.getRetryBudget().getTtl()));
      if (RetryBudget.valid(ratio, ttl)) {
        budget = new RetryBudget(ticker, ratio, p.getRetryBudget().getMinRetriesPerSecond(), ttl);
      } else {
        log.warn("{}: invalid retry budget (ratio {}, ttl {}): routes not retried", p.getFullyQualifiedName(), ratio, ttl);
      }
    }
    List<RouteSnapshot> routes = new ArrayList<>();
    for (Route r : p.getRoutesList()) {
      try {
        routes.add(RouteSnapshot.of(r, budget != null));
      } catch (IllegalArgumentException e) {
        log.warn("{}: route skipped: {}", p.getFullyQualifiedName(), e.getMessage());
      }
    }
    List<WeightedDst> overrides = p.getDstOverridesList().stream().filter(d -> d.getWeight() > 0).toList();
    return new ProfileSnapshot(List.copyOf(routes), budget, overrides);
  }

  /** The first route whose condition matches, or {@link RouteSnapshot#DEFAULT}. */
  RouteSnapshot route(HttpRequest request) {
    // By index: an iterator per request is an allocation whenever escape analysis gives up on it.
    for (int i = 0, n = routes.size(); i < n; i++) {
      RouteSnapshot r = routes.get(i);
      if (r.condition().test(request)) {
        return r;
      }
    }
    return RouteSnapshot.DEFAULT;
  }
}
