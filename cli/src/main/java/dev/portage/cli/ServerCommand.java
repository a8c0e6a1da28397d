package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
import dev.portage.tunnel.server.AgentTokenAuth;
import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.ProxyStrategy;
import dev.portage.tunnel.server.TlsFiles;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import dev.portage.cli.flags.UpstreamCompatible;
import dev.portage.cli.flags.UpstreamFlags;
import dev.portage.core.net.GoCipherSuites;
import dev.portage.tunnel.kube.KubeClients;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage server}: the Konnectivity-compatible proxy server with upstream proxy-server's flag
 * names and defaults, so scripts written for upstream run unchanged. Runs until SIGTERM/SIGINT.
 */
@Command(
    name = "server",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Konnectivity-compatible tunnel server: agents connect out to it, clients reach them through it.")
public final class ServerCommand implements Callable<Integer>, UpstreamCompatible {
  private static final Logger log = LoggerFactory.getLogger(ServerCommand.class);

  /** klog's flags, as upstream manifests pass them. */
  @Mixin KlogOptions klog = new KlogOptions();


  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--mode", defaultValue = "grpc", description = "Frontend protocol: grpc or http-connect (default: ${DEFAULT-VALUE}).")
  String mode;

  @Option(names = "--uds-name", description = "Serve frontends on this Unix domain socket (requires --server-port=0).")
  Path udsName;

  @Option(names = "--delete-existing-uds-file", arity = "0..1", defaultValue = "true", fallbackValue = "true",
      description = "Replace an existing file at --uds-name (default: ${DEFAULT-VALUE}).")
  boolean deleteExistingUdsFile;

  @Option(names = "--server-port", defaultValue = "8090", description = "Frontend port (default: ${DEFAULT-VALUE}).")
  int serverPort;

  @Option(names = "--server-bind-address", defaultValue = "", description = "Frontend bind address (default: all).")
  String serverBindAddress;

  @Option(names = "--server-cert", description = "Frontend TLS certificate (PEM).")
  Path serverCert;

  @Option(names = "--server-key", description = "Frontend TLS key (PEM).")
  Path serverKey;

  @Option(names = "--server-ca-cert", description = "CA for frontend client certificates (turns on mTLS).")
  Path serverCaCert;

  @Option(names = "--agent-port", defaultValue = "8091", description = "Agent port (default: ${DEFAULT-VALUE}).")
  int agentPort;

  @Option(names = "--agent-bind-address", defaultValue = "", description = "Agent bind address (default: all).")
  String agentBindAddress;

  @Option(names = "--cluster-cert", description = "Agent listener TLS certificate (PEM).")
  Path clusterCert;

  @Option(names = "--cluster-key", description = "Agent listener TLS key (PEM).")
  Path clusterKey;

  @Option(names = "--cluster-ca-cert", description = "CA for agent client certificates (turns on mTLS).")
  Path clusterCaCert;

  @Option(names = "--health-port", defaultValue = "8092", description = "Health port (default: ${DEFAULT-VALUE}).")
  int healthPort;

  @Option(names = "--health-bind-address", defaultValue = "", description = "Health bind address (default: all).")
  String healthBindAddress;

  @Option(names = "--admin-port", defaultValue = "8095", description = "Admin port (default: ${DEFAULT-VALUE}).")
  int adminPort;

  @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", description = "Admin bind address (default: ${DEFAULT-VALUE}).")
  String adminBindAddress;

  @Option(names = "--keepalive-time", defaultValue = "1h", converter = GoDuration.class,
      description = "Keepalive ping interval toward agents (default: ${DEFAULT-VALUE}).")
  Duration keepaliveTime;

  @Option(names = "--frontend-keepalive-time", defaultValue = "1h", converter = GoDuration.class,
      description = "Keepalive ping interval toward frontends (default: ${DEFAULT-VALUE}).")
  Duration frontendKeepaliveTime;

  @Option(names = "--server-id", defaultValue = "${env:PROXY_SERVER_ID}",
      description = "This server's ID (default: $PROXY_SERVER_ID, else a random UUID).")
  String serverId;

  @Option(names = "--server-count", defaultValue = "1", description = "Number of server replicas (default: ${DEFAULT-VALUE}).")
  int serverCount;

  @Option(names = "--agent-namespace", description = "Namespace of the agents' service account (turns on token auth).")
  String agentNamespace;

  @Option(names = "--agent-service-account", description = "The agents' service account.")
  String agentServiceAccount;

  @Option(names = "--authentication-audience", description = "Audience of agent tokens.")
  String authenticationAudience;

  @Option(names = "--kubeconfig", description = "Kubeconfig for token reviews and leases (default: in-cluster or ~/.kube/config).")
  Path kubeconfig;

  @Option(names = "--proxy-strategies", defaultValue = "default",
      description = "Comma list of default, destHost, defaultRoute, tried in order (default: ${DEFAULT-VALUE}).")
  String proxyStrategies;

  @Option(names = "--xfr-channel-size", defaultValue = "10",
      description = "Packets each connection may always queue toward its client (default: ${DEFAULT-VALUE}).")
  int xfrChannelSize;

  @Option(names = "--flow-control", arity = "0..1", fallbackValue = "true", defaultValue = "true",
      description = "Portage only: negotiate per-connection credit windows with Portage peers; false keeps the"
          + " upstream overflow rule (default: ${DEFAULT-VALUE}).")
  boolean flowControl;

  @Option(names = "--flow-control-window", defaultValue = "4194304", paramLabel = "BYTES",
      description = "Portage only: per-connection credit window offered to agents, in bytes, up to 1073741824;"
          + " 0 turns flow control off (default: ${DEFAULT-VALUE}).")
  long flowControlWindow;

  @Option(names = "--enable-lease-controller", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Maintain a server Lease for agents that count leases.")
  boolean enableLeaseController;

  @Option(names = "--lease-namespace", defaultValue = "kube-system", description = "Lease namespace (default: ${DEFAULT-VALUE}).")
  String leaseNamespace;

  @Option(names = "--lease-label", defaultValue = "k8s-app=konnectivity-server",
      description = "Labels of server leases, k=v[,k=v] (default: ${DEFAULT-VALUE}).")
  String leaseLabel;

  @Option(names = "--graceful-shutdown-timeout", defaultValue = "0", converter = GoDuration.class,
      description = "How long close waits for open streams (default: ${DEFAULT-VALUE}).")
  Duration gracefulShutdownTimeout;

  @Option(names = "--backend-dial-timeout", defaultValue = "0", converter = GoDuration.class,
      description = "Fail dials the agent has not answered within this time; 0 = never (default: ${DEFAULT-VALUE}).")
  Duration backendDialTimeout;

  @Option(names = "--grpc-frontend-port", defaultValue = "-1",
      description = "Portage only: with --mode http-connect, also serve gRPC frontends on this port; -1 = off (default: ${DEFAULT-VALUE}).")
  int grpcFrontendPort;

  @Option(names = "--cipher-suites", split = ",",
      description = "TLS 1.2 cipher suites, by Go's (IANA) names; unknown and insecure suites are refused, as upstream refuses them.")
  List<String> cipherSuites;

  @Mixin ProfilingOptions profiling = new ProfilingOptions();

  @Mixin KeyExchangeGroupsOption keyExchangeGroups = new KeyExchangeGroupsOption();

  @Option(names = "--kubeconfig-qps", defaultValue = "0",
      description = "Requests per second to the Kubernetes API; 0 means client-go's default, 5 (default: ${DEFAULT-VALUE}).")
  float kubeconfigQps;

  @Option(names = "--kubeconfig-burst", defaultValue = "0",
      description = "Requests at once above --kubeconfig-qps; 0 means client-go's default, 10 (default: ${DEFAULT-VALUE}).")
  int kubeconfigBurst;

  @Option(names = "--kube-api-content-type", defaultValue = KubeClients.PROTOBUF,
      description = "Content type toward the Kubernetes API; the client speaks application/json, other values log one WARN (default: ${DEFAULT-VALUE}).")
  String kubeApiContentType;

  /** Upstream flags accepted for compatibility that change nothing here. */
  @Override
  public UpstreamFlags upstreamFlags() {
    // Deprecated upstream (no effect there either); Portage's per-connection queues have no channel limit to warn on.
    return UpstreamFlags.pflag("proxy-server").bool("--warn-on-channel-limit");
  }

  @Option(names = "--tls-min-version", description = "Lowest TLS version: VersionTLS12 or VersionTLS13.")
  String tlsMinVersion;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    TunnelServerConfig config = toConfig();
    KubernetesClient kubernetes = config.agentTokenAuth() != null || config.enableLeaseController()
        ? kubernetesClient() : null;
    try (TunnelServer server = TunnelServer.builder(config).kubernetesClient(kubernetes)
        .registry(ProcessMetrics.registry()).build()) {
      server.start();
      signals.await(null);
    } finally {
      if (kubernetes != null) {
        kubernetes.close();
      }
    }
    return 0;
  }

  /** The server configuration these flags describe; bad combinations fail with the flag names. */
  TunnelServerConfig toConfig() {
    try {
      return TunnelServerConfig.builder()
          .serverId(serverId == null || serverId.isBlank() ? UUID.randomUUID().toString() : serverId)
          .serverCount(serverCount)
          .mode(FrontendMode.of(mode))
          .udsName(udsName)
          .deleteExistingUdsFile(deleteExistingUdsFile)
          .serverPort(serverPort)
          .serverBindAddress(serverBindAddress)
          .frontendTls(tls("--server-cert", serverCert, "--server-key", serverKey, serverCaCert, "--server-ca-cert"))
          .agentPort(agentPort)
          .agentBindAddress(agentBindAddress)
          .agentTls(tls("--cluster-cert", clusterCert, "--cluster-key", clusterKey, clusterCaCert, "--cluster-ca-cert"))
          .healthPort(healthPort)
          .healthBindAddress(healthBindAddress)
          .adminPort(adminPort)
          .adminBindAddress(adminBindAddress)
          .keepaliveTime(keepaliveTime)
          .frontendKeepaliveTime(frontendKeepaliveTime)
          .agentTokenAuth(tokenAuth())
          .proxyStrategies(ProxyStrategy.parseList(proxyStrategies))
          .xfrChannelSize(xfrChannelSize)
          .flowControlWindow(flowControl ? flowControlWindow : 0)
          .enableLeaseController(enableLeaseController)
          .leaseNamespace(leaseNamespace)
          .leaseLabels(TunnelServerConfig.parseLabels(leaseLabel))
          .gracefulShutdownTimeout(gracefulShutdownTimeout)
          .backendDialTimeout(backendDialTimeout)
          .cipherSuites(secureCipherSuites())
          .keyExchangeGroups(keyExchangeGroups.ianaNames())
          .tlsMinVersion(tlsMinVersion)
          .grpcFrontendPort(grpcFrontendPort)
          .enableProfiling(profiling.enableProfiling)
          .enableContentionProfiling(profiling.enableContentionProfiling)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  private List<String> secureCipherSuites() {
    List<String> suites = cipherSuites == null ? List.of() : cipherSuites;
    GoCipherSuites.requireSecure(suites);
    return suites;
  }

  private TlsFiles tls(String certFlag, Path cert, String keyFlag, Path key, Path ca, String caFlag) {
    if (cert == null && key == null) {
      if (ca != null) {
        throw new IllegalArgumentException(caFlag + " needs " + certFlag + " and " + keyFlag);
      }
      return null;
    }
    if (cert == null || key == null) {
      throw new IllegalArgumentException(certFlag + " and " + keyFlag + " go together (expected: both or neither)");
    }
    return new TlsFiles(cert, key, ca);
  }

  private AgentTokenAuth tokenAuth() {
    if (agentNamespace == null || agentNamespace.isEmpty()) {
      if (agentServiceAccount != null || authenticationAudience != null) {
        throw new IllegalArgumentException(
            "--agent-service-account and --authentication-audience need --agent-namespace");
      }
      return null;
    }
    if (agentServiceAccount == null || authenticationAudience == null) {
      throw new IllegalArgumentException(
          "--agent-namespace needs --agent-service-account and --authentication-audience");
    }
    if (clusterCaCert != null) {
      throw new IllegalArgumentException("--agent-namespace and --cluster-ca-cert are exclusive");
    }
    return new AgentTokenAuth(agentNamespace, agentServiceAccount, authenticationAudience);
  }

  private KubernetesClient kubernetesClient() throws IOException {
    return KubeClients.create(kubeconfig, kubeconfigQps, kubeconfigBurst, kubeApiContentType);
  }
}
