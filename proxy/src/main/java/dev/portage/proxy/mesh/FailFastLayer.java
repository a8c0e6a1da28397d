package dev.portage.proxy.mesh;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Fail-fast layer (Linkerd's balancer queue): when the balancer has no ready endpoint, the request
 * waits up to {@code timeout} for one (a new endpoint set, a reconnect, a probation). If none comes
 * the destination enters fail-fast: that request and every later one get 503 "service in fail-fast"
 * at once, until an endpoint is ready again. The layer below sends a request whose connect failed
 * back here. Timers run on the injected scheduler.
 */
final class FailFastLayer implements Service {

  static final String BODY = "service in fail-fast";

  private final Discovery discovery;
  private final ScheduledExecutorService scheduler;
  private final long timeoutNanos;
  private final SidecarMetrics metrics;
  private final Service inner;

  /** Picks found nothing although an endpoint was ready (a probe taken meanwhile) before waiting. */
  private static final int READY_RECHECKS = 3;

  /** @param inner makes the layer below, given the service a failed connect requeues to (this) */
  FailFastLayer(
      Discovery discovery, ScheduledExecutorService scheduler, Duration timeout, SidecarMetrics metrics,
      Function<Service, Service> inner) {
    this.discovery = discovery;
    this.scheduler = scheduler;
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
    this.inner = inner.apply(this);
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    Destination d = discovery.get(r.concreteAuthority);
    if (d.inFailFast()) {
      return refuse(r);
    }
    CompletableFuture<ProxyResponse> f = inner.call(r);
    // The balance layer answers "no ready endpoint" at once, with a failed future: only then is
    // there anything to wait for. Any other future goes up unchanged (no stage per request).
    if (f.state() == Future.State.FAILED
        && Failures.unwrap(f.exceptionNow()) instanceof ProxyException.NoReadyEndpoint) {
      return await(r, d);
    }
    return f;
  }

  private CompletableFuture<ProxyResponse> await(ProxyRequest r, Destination d) {
    CompletableFuture<Void> ready = new CompletableFuture<>();
    ScheduledFuture<?> timer = scheduler.schedule(() -> {
      if (ready.completeExceptionally(new ProxyException(503, BODY))) {
        d.enterFailFast();
      }
    }, timeoutNanos, TimeUnit.NANOSECONDS);
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
    return ready
        .handle((v, err) -> {
          r.removeOnCancel(onCancel);
          if (err != null) {
            metrics.failFast(r.concreteAuthority);
            return CompletableFuture.<ProxyResponse>failedFuture(Failures.unwrap(err));
          }
          return call(r);
        })
        .thenCompose(f -> f);
  }

  private CompletableFuture<ProxyResponse> refuse(ProxyRequest r) {
    metrics.failFast(r.concreteAuthority);
    return CompletableFuture.failedFuture(new ProxyException(503, BODY));
  }
}
