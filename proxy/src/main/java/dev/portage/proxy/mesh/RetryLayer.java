package dev.portage.proxy.mesh;

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
  public void call(ProxyRequest r, Reply reply) {
    RouteSnapshot route = r.route;
    RetryBudget budget = r.profile.budget();
    if (!route.retryable() || budget == null) {
      inner.call(r, reply);
      return;
    }
    budget.deposit();
    inner.call(r, new Attempts(route, budget, reply));
  }

  /** One retryable request's attempts: each answer is passed on or sent again. */
  private final class Attempts implements Reply {
    private final RouteSnapshot route;
    private final RetryBudget budget;
    private final Reply reply;

    Attempts(RouteSnapshot route, RetryBudget budget, Reply reply) {
      this.route = route;
      this.budget = budget;
      this.reply = reply;
    }

    @Override
    public void done(ProxyRequest r, ProxyResponse resp, Throwable e) {
      boolean failed =
          resp != null ? route.isFailure(resp.head(), r.isGrpc()) : e instanceof ProxyException.UpstreamFailure;
      if (!failed || r.isCancelled() || !r.body.replayable()) {
        reply.done(r, resp, e);
        return;
      }
      if (!budget.tryWithdraw()) {
        metrics.budgetExhausted(r.authority, route.name());
        reply.done(r, resp, e);
        return;
      }
      metrics.retry(r.authority, route.name());
      if (resp != null) {
        resp.body().discard();
      }
      inner.call(r, this);
    }
  }
}
