package dev.portage.tunnel.server;

import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;
import dev.portage.tunnel.wire.AgentIdentifiers;
import java.util.ArrayList;
import java.util.List;

/**
 * The tunnel server's live state for the admin dashboard: a summary, then one row per agent stream
 * with its identifiers, draining state, established and pending connections and DATA bytes each
 * way. Reads the router's own maps on every render, so it cannot drift from what the server does.
 * Thread-safe (reads concurrent structures only).
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "tunnel-server";
  static final String SUMMARY = "Server";
  static final String AGENTS = "Agents";

  private final TunnelServerConfig config;
  private final PacketRouter router;

  DashboardState(TunnelServerConfig config, PacketRouter router) {
    this.config = config;
    this.router = router;
  }

  @Override
  public void render(DashboardView view) {
    List<Backend> backends = router.backends().all();
    long toAgents = 0;
    long fromAgents = 0;
    int established = 0;
    List<Object[]> rows = new ArrayList<>();
    for (Backend b : backends) {
      int connections = b.connections().size();
      long sent = b.bytesToAgent();
      long received = b.bytesFromAgent();
      established += connections;
      toAgents += sent;
      fromAgents += received;
      rows.add(new Object[] {b.agentId(), identifiers(b.identifiers()), b.draining(), connections,
          router.pending().countFor(b), sent, received});
    }
    // The summary comes first on the page; its totals come from the same pass as the rows.
    view.fields(SUMMARY)
        .put("server id", config.serverId())
        .put("frontend", config.mode().flagName())
        .put("proxy strategies", config.proxyStrategies().stream().map(ProxyStrategy::flagName).toList())
        .put("ready", router.backends().ready())
        .put("agent streams", backends.size())
        .put("established connections", established)
        .put("pending dials", router.pending().size())
        .put("bytes to agents", toAgents)
        .put("bytes from agents", fromAgents);
    DashboardView.Table agents = view.table(AGENTS, "agent", "identifiers", "draining",
        "established", "pending dials", "bytes to agent", "bytes from agent");
    rows.forEach(agents::row);
  }

  private static List<String> identifiers(AgentIdentifiers ids) {
    List<String> out = new ArrayList<>();
    ids.hosts().forEach(h -> out.add("host=" + h));
    ids.ipv4().forEach(a -> out.add("ipv4=" + a));
    ids.ipv6().forEach(a -> out.add("ipv6=" + a));
    ids.cidrs().forEach(c -> out.add("cidr=" + c));
    if (ids.defaultRoute()) {
      out.add("default-route");
    }
    return out;
  }
}
