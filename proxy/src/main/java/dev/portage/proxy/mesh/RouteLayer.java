package dev.portage.proxy.mesh;

import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * Route layer: finds the destination's service profile (waiting for the first one at most {@code
 * profileWait}, then going on with the default) and the first route whose condition matches the
 * request; later layers read both from the request.
 */
final class RouteLayer implements Service {

  private final Profiles profiles;
  private final TimeSource time;
  private final long profileWaitNanos;
  private final Service inner;

  RouteLayer(Profiles profiles, TimeSource time, Duration profileWait, Service inner) {
    this.profiles = profiles;
    this.time = time;
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
          time.scheduleOn(r.loop, () -> bounded.complete(ProfileSnapshot.DEFAULT), profileWaitNanos);
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
