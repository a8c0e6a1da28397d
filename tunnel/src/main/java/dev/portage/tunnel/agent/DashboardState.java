package dev.portage.tunnel.agent;

import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;
import java.util.List;

/**
 * The agent's live state for the admin dashboard: servers connected versus expected, then one row
 * per server connection with its open backend connections and dials in flight. Reads the {@link
 * ClientSet}'s live connection map on every render. Thread-safe.
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "tunnel-agent";
  static final String SUMMARY = "Agent";
  static final String SERVERS = "Servers";

  private final TunnelAgentConfig config;
  private final ClientSet clients;

  DashboardState(TunnelAgentConfig config, ClientSet clients) {
    this.config = config;
    this.clients = clients;
  }

  @Override
  public void render(DashboardView view) {
    List<ServerConnection> connections = clients.connections();
    int backends = 0;
    int dials = 0;
    for (ServerConnection c : connections) {
      backends += c.openEndpointConnections();
      dials += c.pendingDials();
    }
    view.fields(SUMMARY)
        .put("agent id", config.agentId())
        .put("proxy server", config.proxyServerHost() + ":" + config.proxyServerPort())
        .put("identifiers", config.agentIdentifiers())
        .put("servers connected", connections.size())
        .put("servers expected", clients.targetServerCount())
        .put("draining", clients.draining())
        .put("backend connections", backends)
        .put("pending dials", dials);
    DashboardView.Table servers =
        view.table(SERVERS, "server", "ready", "server count", "backend connections", "pending dials");
    for (ServerConnection c : connections) {
      servers.row(c.serverId(), c.isReady(), c.serverCount(), c.openEndpointConnections(), c.pendingDials());
    }
  }
}
