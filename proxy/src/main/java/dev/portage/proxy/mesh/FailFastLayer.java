package dev.portage.proxy.mesh;

import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;

/**
 * Fail-fast layer (Linkerd's balancer queue): when the balancer has no ready endpoint, the request
 * waits up to {@code timeout} for one (a new endpoint set, a reconnect, a probation). If none comes
 * the destination enters fail-fast: that request and every later one get 503 "service in fail-fast"
 * at once, until an endpoint is ready again. The layer below sends a request whose connect failed
 * back here. A waiting request's timer runs on its event loop ({@link TimeSource#scheduleOn}).
 */
final class FailFastLayer implements Service {

  static final String BODY = "service in fail-fast";

  private final Discovery discovery;
  private final TimeSource time;
  private final long timeoutNanos;
  private final SidecarMetrics metrics;
  private final BalanceLayer inner;

  /** Picks found nothing although an endpoint was ready (a probe taken meanwhile) before waiting. */
  private static final int READY_RECHECKS = 3;

  /** @param inner makes the layer below, given the service a failed connect requeues to (this) */
  FailFastLayer(
      Discovery discovery, TimeSource time, Duration timeout, SidecarMetrics metrics,
      Function<Service, BalanceLayer> inner) {
    this.discovery = discovery;
    this.time = time;
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
    this.inner = inner.apply(this);
  }

  @Override
  public void call(ProxyRequest r, Reply reply) {
    Destination d = discovery.get(r.concreteAuthority, r.startNanos);
    if (d.inFailFast()) {
      metrics.failFast(r.concreteAuthority);
      reply.done(r, null, new ProxyException(503, BODY));
      return;
    }
    // The balance layer says at once when no endpoint is ready: only then is there anything to
    // wait for, and only then does this layer hear the answer (no stage per request otherwise).
    if (!inner.dispatch(r, d, reply)) {
      await(r, d, reply);
    }
  }

  private void await(ProxyRequest r, Destination d, Reply reply) {
    CompletableFuture<Void> ready = new CompletableFuture<>();
    ScheduledFuture<?> timer = time.scheduleOn(r.loop, () -> {
      if (ready.completeExceptionally(new ProxyException(503, BODY))) {
        d.enterFailFast();
      }
    }, timeoutNanos);
    CompletableFuture<Void> signal = d.whenReady();
    if (signal.isDone() && ++r.readyRechecks > READY_RECHECKS) {
      signal = d.nextReady(); // do not spin while readiness flickers: wait for the next change
    }
    signal.thenRun(() -> {
      timer.cancel(false);
      ready.complete(null);
    });
    Runnable onCancel = () -> ready.completeExceptionally(new ProxyException(503, "request cancelled"));
    r.onCancel(onCancel);
    ready.whenComplete((v, err) -> {
      r.removeOnCancel(onCancel);
      if (err != null) {
        metrics.failFast(r.concreteAuthority);
        reply.done(r, null, Failures.unwrap(err));
      } else {
        call(r, reply);
      }
    });
  }
}
