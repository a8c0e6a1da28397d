package dev.portage.cli.quickstart;

/**
 * The ports the quickstart binds: upstream defaults where a component has them (Konnectivity 8090-8095,
 * Linkerd destination 8086 and proxy 4140/4191, kube-proxy metrics 10249, YurtHub proxy 10261 and
 * hub server 10267), so the printed commands match the upstream docs; all zero for tests. The mock
 * Kubernetes API server behind the hub listens on 6080 (plain HTTP) and the quickstart's own
 * offline/online switch on 9990.
 */
public record QuickstartPorts(
    int fastBackend,
    int mediumBackend,
    int slowBackend,
    int tunnelHttpConnect,
    int tunnelGrpc,
    int tunnelAgent,
    int tunnelHealth,
    int agentHealth,
    int tunnelAdmin,
    int agentAdmin,
    int controlPlaneGrpc,
    int controlPlaneAdmin,
    int serviceProxy,
    int serviceProxyAdmin,
    int sidecarOutbound,
    int sidecarAdmin,
    int mockApiServer,
    int hubProxy,
    int hubServe,
    int quickstartAdmin) {

  public static QuickstartPorts defaults() {
    return new QuickstartPorts(9101, 9102, 9103, 8090, 8089, 8091, 8092, 8093, 8095, 8094, 8086, 9996, 8080, 10249,
        4140, 4191, 6080, 10261, 10267, 9990);
  }

  public static QuickstartPorts ephemeral() {
    return new QuickstartPorts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  /** Ephemeral ports except the tunnel's HTTP CONNECT port (tests of the "port busy" path). */
  public static QuickstartPorts ephemeralExceptHttpConnect(int port) {
    return new QuickstartPorts(0, 0, 0, port, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  }
}
