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
  public void call(ProxyRequest r, Reply reply) {
    ProfileSnapshot known = profiles.current(r.authority, r.startNanos);
    if (known != null) {
      // The usual case once the profile is known: no future per request.
      route(r, known, reply);
      return;
    }
    CompletableFuture<ProfileSnapshot> profile = profiles.get(r.authority);
    if (profile.isDone() && !profile.isCompletedExceptionally()) {
      route(r, profile.resultNow(), reply);
      return;
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
    profile.whenComplete((p, err) -> {
      if (err != null) {
        reply.done(r, null, Failures.unwrap(err));
      } else {
        route(r, p, reply);
      }
    });
  }

  private void route(ProxyRequest r, ProfileSnapshot p, Reply reply) {
    r.profile = p;
    r.route = p.route(r.head);
    inner.call(r, reply);
  }
}
