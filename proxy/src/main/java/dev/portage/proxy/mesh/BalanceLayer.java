package dev.portage.proxy.mesh;

import dev.portage.core.balance.Pick;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * Balance layer: picks a ready endpoint of the concrete authority with the destination's balancer
 * (discovered on first use) and dispatches the attempt to it ({@link EndpointAttempt} tells the
 * pick its latency and result). No ready endpoint is a {@link ProxyException.NoReadyEndpoint} for
 * the fail-fast layer. A request whose connect failed was never sent: the endpoint becomes
 * unreachable (reconnected in the background) and the request goes back to the fail-fast layer
 * ({@code requeue}), which picks again among the endpoints still ready or waits for one.
 */
final class BalanceLayer implements Service {

  private final Discovery discovery;
  private final Ticker ticker;
  private final SidecarMetrics metrics;
  private final EndpointDispatch dispatch;
  private final Service requeue;

  /** @param requeue where a request whose connect failed goes again: the layer above */
  BalanceLayer(
      Discovery discovery, Ticker ticker, SidecarMetrics metrics, EndpointDispatch dispatch, Service requeue) {
    this.discovery = discovery;
    this.ticker = ticker;
    this.metrics = metrics;
    this.dispatch = dispatch;
    this.requeue = requeue;
  }

  @Override
  public CompletableFuture<ProxyResponse> call(ProxyRequest r) {
    String authority = r.concreteAuthority;
    Destination d = discovery.get(authority);
    Pick<InetSocketAddress> pick = d.balancer.pick();
    if (pick == null) {
      return CompletableFuture.failedFuture(new ProxyException.NoReadyEndpoint(authority));
    }
    SidecarMetrics.EndpointMetrics m = metrics.endpoint(authority, pick.endpoint().id(), pick.target());
    EndpointAttempt attempt = new EndpointAttempt(r, d, pick, m, ticker, requeue);
    m.request();
    dispatch.call(r, pick.target(), attempt);
    return attempt.result();
  }
}
