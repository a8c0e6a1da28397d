package dev.portage.proxy.mesh;

import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Timeout layer: the route's timeout, counted from the request's start, bounds the wait for the
 * response head across every attempt. On expiry the client gets 504 and the request is cancelled,
 * which aborts the attempt in flight and stops retries. The timer runs on the injected scheduler.
 */
final class TimeoutLayer implements Service {

  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Service inner;

  TimeoutLayer(ScheduledExecutorService scheduler, Ticker ticker, Service inner) {
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.inner = inner;
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    Duration timeout = r.route.timeout();
    if (timeout.isZero()) {
      return inner.call(r);
    }
    CompletableFuture<ProxyResponse> result = new CompletableFuture<>();
    long remaining = Math.max(0, r.startNanos + timeout.toNanos() - ticker.nanoTime());
    ScheduledFuture<?> timer =
        scheduler.schedule(
            () -> {
              if (result.completeExceptionally(
                  new ProxyException(504, "request timed out after " + timeout.toMillis() + " ms"))) {
                r.cancel();
              }
            },
            remaining,
            TimeUnit.NANOSECONDS);
    inner.call(r).whenComplete((resp, err) -> {
      timer.cancel(false);
      if (err != null) {
        result.completeExceptionally(Failures.unwrap(err));
      } else if (!result.complete(resp)) {
        resp.body().discard();
      }
    });
    return result;
  }
}
