package dev.portage.proxy.service;

import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;
import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The service proxy's live state for the admin dashboard: mode, sync state, Service ports the kernel
 * rules serve (nftables) and live connections, then
 * every service's endpoints with their health, balancer cost (peak-EWMA only, learnt from connect
 * times), dials in flight and relayed connections, read from the listeners' current balancers and
 * the proxy's live connection set. An L4 proxy has no retry budget: a failed dial
 * moves on to the next endpoint, up to one attempt per configured dial timeout, which the summary
 * shows. Thread-safe.
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "service-proxy";
  static final String SUMMARY = "Service proxy";
  static final String ENDPOINTS = "Endpoints";

  private final ServiceProxy proxy;

  DashboardState(ServiceProxy proxy) {
    this.proxy = proxy;
  }

  @Override
  public void render(DashboardView view) {
    Map<String, ServiceListener> listeners = proxy.listeners();
    Map<String, Integer> relayed = new HashMap<>();
    for (ProxiedConnection c : proxy.connections()) {
      String endpoint = c.endpointId();
      if (endpoint != null) {
        relayed.merge(c.service() + " " + endpoint, 1, Integer::sum);
      }
    }
    view.fields(SUMMARY)
        .put("mode", proxy.config().proxyMode().flag())
        .put("synced", proxy.isReady())
        .put("syncs", proxy.syncs())
        .put("Service ports (kernel rules)", proxy.servicePortCount())
        .put("services", listeners.size())
        .put("live connections", proxy.liveConnections())
        .put("dial attempts per connection", proxy.config().dialTimeouts().size());
    DashboardView.Table table = view.table(ENDPOINTS,
        "service", "listen", "balancer", "endpoint", "healthy", "dials in flight", "connections",
        "ewma cost ms");
    for (ServiceListener l : listeners.values()) {
      Balancer<InetSocketAddress> balancer = l.balancer();
      String listen = l.localAddress().getAddress().getHostAddress() + ":" + l.localAddress().getPort();
      for (Endpoint<InetSocketAddress> e : balancer.endpoints()) {
        double cost = balancer.costNanos(e);
        table.row(l.name(), listen, l.spec().balancer().label, e.id(), e.isHealthy(), e.inFlight(),
            relayed.getOrDefault(l.name() + " " + e.id(), 0), Double.isNaN(cost) ? null : Math.round(cost / 1e3) / 1000.0);
      }
    }
  }
}
