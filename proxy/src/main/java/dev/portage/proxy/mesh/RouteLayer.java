package dev.portage.proxy.mesh;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Route layer: finds the destination's service profile (waiting for the first one at most {@code
 * profileWait}, then going on with the default) and the first route whose condition matches the
 * request; later layers read both from the request.
 */
final class RouteLayer implements Service {

  private final Profiles profiles;
  private final ScheduledExecutorService scheduler;
  private final long profileWaitNanos;
  private final Service inner;

  RouteLayer(Profiles profiles, ScheduledExecutorService scheduler, Duration profileWait, Service inner) {
    this.profiles = profiles;
    this.scheduler = scheduler;
    this.profileWaitNanos = profileWait.toNanos();
    this.inner = inner;
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    ProfileSnapshot known = profiles.current(r.authority);
    if (known != null) {
      // The usual case once the profile is known: no future per request.
      return route(r, known);
    }
    CompletableFuture<ProfileSnapshot> profile = profiles.get(r.authority);
    if (profile.isDone() && !profile.isCompletedExceptionally()) {
      return route(r, profile.resultNow());
    }
    if (!profile.isDone()) {
      CompletableFuture<ProfileSnapshot> bounded = new CompletableFuture<>();
      ScheduledFuture<?> timer =
          scheduler.schedule(() -> bounded.complete(ProfileSnapshot.DEFAULT), profileWaitNanos, TimeUnit.NANOSECONDS);
      profile.thenAccept(p -> {
        timer.cancel(false);
        bounded.complete(p);
      });
      profile = bounded;
    }
    return profile.thenCompose(p -> route(r, p));
  }

  private CompletableFuture<ProxyResponse> route(ProxyRequest r, ProfileSnapshot p) {
    r.profile = p;
    r.route = p.route(r.head);
    return inner.call(r);
  }
}
