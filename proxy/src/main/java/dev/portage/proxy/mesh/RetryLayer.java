package dev.portage.proxy.mesh;

import java.util.concurrent.CompletableFuture;

/**
 * Retry layer: on a retryable route, an attempt whose response the route classifies as a failure
 * (its response classes, else a 5xx or a gRPC failure status in a trailers-only response), or that
 * failed before any response, is sent again while the profile's retry budget allows, the
 * request is not cancelled (timeout, client gone) and its body can still be replayed from the
 * replay buffer. Each original request deposits into the budget; each retry withdraws; a retry the
 * budget refuses is counted.
 */
final class RetryLayer implements Service {

  private final SidecarMetrics metrics;
  private final Service inner;

  RetryLayer(SidecarMetrics metrics, Service inner) {
    this.metrics = metrics;
    this.inner = inner;
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    RouteSnapshot route = r.route;
    RetryBudget budget = r.profile.budget();
    if (!route.retryable() || budget == null) {
      return inner.call(r);
    }
    budget.deposit();
    CompletableFuture<ProxyResponse> result = new CompletableFuture<>();
    attempt(r, route, budget, result);
    return result;
  }

  private void attempt(
      ProxyRequest r, RouteSnapshot route, RetryBudget budget, CompletableFuture<ProxyResponse> result) {
    inner.call(r).whenComplete((resp, err) -> {
      Throwable e = err == null ? null : Failures.unwrap(err);
      boolean failed =
          resp != null ? route.isFailure(resp.head(), r.isGrpc()) : e instanceof ProxyException.UpstreamFailure;
      if (!failed || r.isCancelled() || !r.body.replayable()) {
        complete(result, resp, e);
        return;
      }
      if (!budget.tryWithdraw()) {
        metrics.budgetExhausted(r.authority, route.name());
        complete(result, resp, e);
        return;
      }
      metrics.retry(r.authority, route.name());
      if (resp != null) {
        resp.body().discard();
      }
      attempt(r, route, budget, result);
    });
  }

  private static void complete(CompletableFuture<ProxyResponse> result, ProxyResponse resp, Throwable e) {
    if (e != null) {
      result.completeExceptionally(e);
    } else if (!result.complete(resp)) {
      resp.body().discard();
    }
  }
}
