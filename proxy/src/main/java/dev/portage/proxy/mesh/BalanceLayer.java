package dev.portage.proxy.mesh;

import dev.portage.core.balance.Pick;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;

/**
 * Balance layer: picks a ready endpoint of the concrete authority with the destination's balancer
 * (the destination found by the fail-fast layer above) and dispatches the attempt to it ({@link
 * EndpointAttempt} tells the pick its latency and result), or tells the fail-fast layer that no
 * endpoint is ready. A request whose connect failed was never sent: the endpoint becomes
 * unreachable (reconnected in the background) and the request goes back to the fail-fast layer
 * ({@code requeue}), which picks again among the endpoints still ready or waits for one.
 */
final class BalanceLayer {

  private final Ticker ticker;
  private final SidecarMetrics metrics;
  private final EndpointDispatch dispatch;
  private final Service requeue;

  /** @param requeue where a request whose connect failed goes again: the layer above */
  BalanceLayer(
      Ticker ticker, SidecarMetrics metrics, EndpointDispatch dispatch, Service requeue) {
    this.ticker = ticker;
    this.metrics = metrics;
    this.dispatch = dispatch;
    this.requeue = requeue;
  }

  /**
   * Dispatches the attempt to a ready endpoint of {@code d} (the concrete authority's destination);
   * false, with {@code reply} not called, when none is ready.
   */
  boolean dispatch(ProxyRequest r, Destination d, Reply reply) {
    Pick<InetSocketAddress> pick = d.balancer.pick();
    if (pick == null) {
      return false;
    }
    SidecarMetrics.EndpointMetrics m = metrics.endpoint(d.authority, pick.endpoint().id(), pick.target());
    EndpointAttempt attempt = new EndpointAttempt(r, d, pick, m, ticker, requeue, reply);
    m.request();
    dispatch.call(r, pick.target(), attempt);
    return true;
  }
}
