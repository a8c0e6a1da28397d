package dev.portage.proxy.mesh;

import dev.portage.core.balance.Pick;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * Balance layer: picks an endpoint of the concrete authority with the destination's balancer
 * (discovered on first use) and dispatches the attempt to it. The pick ends when the response head
 * arrives: {@code complete(rtt)} with dispatch → head as the RTT peak-EWMA learns from, {@code
 * fail()} when the attempt failed, {@code cancel()} when the request was cancelled. No ready endpoint
 * is a {@link ProxyException.NoReadyEndpoint} for the fail-fast layer.
 */
final class BalanceLayer implements Service {

  private final Discovery discovery;
  private final Ticker ticker;
  private final SidecarMetrics metrics;
  private final EndpointDispatch dispatch;

  BalanceLayer(Discovery discovery, Ticker ticker, SidecarMetrics metrics, EndpointDispatch dispatch) {
    this.discovery = discovery;
    this.ticker = ticker;
    this.metrics = metrics;
    this.dispatch = dispatch;
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    String authority = r.concreteAuthority;
    Pick<InetSocketAddress> pick = discovery.get(authority).balancer.pick();
    if (pick == null) {
      return CompletableFuture.failedFuture(new ProxyException.NoReadyEndpoint(authority));
    }
    long start = ticker.nanoTime();
    String id = pick.endpoint().id();
    return dispatch.call(r, pick.target()).whenComplete((resp, err) -> {
      long rtt = Math.max(0, ticker.nanoTime() - start);
      if (resp != null) {
        pick.complete(rtt);
        metrics.endpointResponse(authority, id, resp.head().status().code(), rtt);
      } else if (r.isCancelled()) {
        pick.cancel();
      } else {
        pick.fail();
        metrics.endpointResponse(authority, id, -1, -1);
      }
    });
  }
}
