package dev.portage.cli.deploy;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which flags of each subcommand open a listening port, and which flag names its bind address.
 * {@code DeployManifestsTest} checks that every {@code --*-port} option is either here or in
 * {@link #REMOTE_PORTS}, so a new port flag cannot slip past the manifest checks.
 */
final class ListenerFlags {

  /**
   * A listener: its port flag, the flag holding its bind address, and a flag that must be set for
   * it to open at all (null: always, when the port is > 0). When both flags are the same flag, it
   * holds kube-proxy's {@code host:port} form ({@code --healthz-bind-address=0.0.0.0:10256}).
   */
  record Listener(String portFlag, String bindFlag, String onlyWith) {}

  /** Port flags that name a port somewhere else, not one this process listens on. */
  static final Set<String> REMOTE_PORTS = Set.of("--proxy-server-port");

  static final Map<String, List<Listener>> BY_SUBCOMMAND = Map.of(
      "server", List.of(
          new Listener("--server-port", "--server-bind-address", null),
          new Listener("--agent-port", "--agent-bind-address", null),
          new Listener("--health-port", "--health-bind-address", null),
          new Listener("--admin-port", "--admin-bind-address", null),
          new Listener("--grpc-frontend-port", "--server-bind-address", null)),
      "agent", List.of(
          new Listener("--health-server-port", "--health-server-host", null),
          new Listener("--admin-server-port", "--admin-bind-address", null)),
      "control-plane", List.of(
          new Listener("--grpc-port", "--grpc-bind-address", null),
          new Listener("--admin-port", "--admin-bind-address", null)),
      "service-proxy", List.of(
          new Listener("--admin-port", "--admin-bind-address", null),
          new Listener("--metrics-bind-address", "--metrics-bind-address", null),
          new Listener("--healthz-bind-address", "--healthz-bind-address", null)),
      "sidecar", List.of(
          new Listener("--outbound-port", "--outbound-bind-address", null),
          new Listener("--admin-port", "--admin-bind-address", null)),
      "hub", List.of(
          new Listener("--proxy-port", "--bind-proxy-address", null),
          new Listener("--proxy-secure-port", "--bind-proxy-address", "--tls-cert-file"),
          new Listener("--serve-port", "--bind-address", null)),
      "quickstart", List.of());

  private ListenerFlags() {}

  static boolean isLoopback(String bindAddress) {
    return bindAddress.equals("127.0.0.1") || bindAddress.equals("localhost") || bindAddress.equals("::1")
        || bindAddress.startsWith("127.");
  }
}
