package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
import dev.portage.cli.flags.UpstreamCompatible;
import dev.portage.cli.flags.UpstreamFlags;
import dev.portage.tunnel.kube.KubeClients;
import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage agent}: the Konnectivity-compatible proxy agent, with upstream proxy-agent flag names
 * and defaults. Signals: the first SIGTERM or SIGINT sends DRAIN to every server and keeps serving
 * established connections; the second closes everything and exits 0. They are caught with {@code
 * sun.misc.Signal} (no shutdown hook), because a hook cannot tell the first signal from the second.
 */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Konnectivity-compatible proxy agent: connects out to the proxy servers and dials backends for them.")
public final class AgentCommand implements Callable<Integer>, UpstreamCompatible {
  private static final Logger log = LoggerFactory.getLogger(AgentCommand.class);

  /** klog's flags, as upstream manifests pass them. */
  @Mixin KlogOptions klog = new KlogOptions();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--agent-cert", description = "Client certificate for mTLS to the server.")
  Path agentCert;

  @Option(names = "--agent-key", description = "Private key of --agent-cert.")
  Path agentKey;

  @Option(names = "--ca-cert", description = "CA that signed the server certificate; turns TLS on (plaintext without it).")
  Path caCert;

  @Option(names = "--proxy-server-host", defaultValue = "127.0.0.1", description = "Proxy server (or load balancer) host.")
  String proxyServerHost;

  @Option(names = "--proxy-server-port", defaultValue = "8091", description = "Proxy server agent port.")
  int proxyServerPort;

  @Option(names = "--alpn-proto", split = ",", description = "ALPN protocols offered to the server (h2 is always offered too).")
  List<String> alpnProtos = new ArrayList<>();

  @Option(names = "--health-server-host", defaultValue = "", description = "Health listener host; empty means all interfaces.")
  String healthServerHost;

  @Option(names = "--health-server-port", defaultValue = "8093", description = "Health listener port (/healthz, /readyz, /metrics).")
  int healthServerPort;

  @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", description = "Admin listener address.")
  String adminBindAddress;

  @Option(names = "--admin-server-port", defaultValue = "8094", description = "Admin listener port (/metrics, /status).")
  int adminServerPort;

  @Option(names = "--agent-id", defaultValue = "${env:PROXY_AGENT_ID}", description = "Agent ID (env PROXY_AGENT_ID; default a random UUID).")
  String agentId;

  @Option(names = "--agent-identifiers", defaultValue = "", description = "URL-query identifiers, e.g. host=node-1&ipv4=10.0.0.7&default-route=true.")
  String agentIdentifiers;

  @Option(names = "--sync-interval", defaultValue = "1s", converter = GoDuration.class, description = "First delay of the sync backoff (Go duration).")
  Duration syncInterval;

  @Option(names = "--probe-interval", defaultValue = "1s", converter = GoDuration.class, description = "How often server connections are probed.")
  Duration probeInterval;

  @Option(names = "--sync-interval-cap", defaultValue = "10s", converter = GoDuration.class, description = "Cap of the sync backoff.")
  Duration syncIntervalCap;

  @Option(names = "--keepalive-time", defaultValue = "1h", converter = GoDuration.class, description = "gRPC keepalive ping interval.")
  Duration keepaliveTime;

  @Option(names = "--service-account-token-path", description = "Token file sent as 'authorization: Bearer'; re-read on every connect.")
  Path serviceAccountTokenPath;

  @Option(names = "--sync-forever", arity = "0..1", fallbackValue = "true", defaultValue = "false", description = "Keep syncing after the server count is reached.")
  boolean syncForever;

  @Option(names = "--xfr-channel-size", defaultValue = "150", description = "Per-connection queue toward the backend, in packets.")
  int xfrChannelSize;

  @Option(names = "--flow-control", arity = "0..1", fallbackValue = "true", defaultValue = "true",
      description = "Portage only: negotiate per-connection credit windows with Portage peers; false keeps the"
          + " upstream overflow rule (default: ${DEFAULT-VALUE}).")
  boolean flowControl;

  @Option(names = "--flow-control-window", defaultValue = "4194304", paramLabel = "BYTES",
      description = "Portage only: per-connection credit window offered to the server, in bytes, up to 1073741824;"
          + " 0 turns flow control off (default: ${DEFAULT-VALUE}).")
  long flowControlWindow;

  @Option(names = "--count-server-leases", arity = "0..1", fallbackValue = "true", defaultValue = "false", description = "Take the server count from live Leases.")
  boolean countServerLeases;

  @Option(names = "--lease-namespace", defaultValue = "kube-system", description = "Namespace of the server Leases.")
  String leaseNamespace;

  @Option(names = {"--lease-label", "--lease-label-selector"}, defaultValue = "k8s-app=konnectivity-server",
      description = "Label selector of the server Leases (upstream's --lease-label; --lease-label-selector is Portage's older name).")
  String leaseLabelSelector;

  @Option(names = "--server-count-source", defaultValue = "default", description = "default | max: how header and lease counts combine.")
  String serverCountSource;

  @Option(names = "--kubeconfig", description = "Kubeconfig for lease counting (default: in-cluster or ~/.kube/config).")
  Path kubeconfig;

  @Mixin ProfilingOptions profiling = new ProfilingOptions();

  @Mixin KeyExchangeGroupsOption keyExchangeGroups = new KeyExchangeGroupsOption();

  @Option(names = "--kube-api-content-type", defaultValue = KubeClients.PROTOBUF,
      description = "Content type toward the Kubernetes API; the client speaks application/json, other values log one WARN (default: ${DEFAULT-VALUE}).")
  String kubeApiContentType;

  /** Upstream flags accepted for compatibility that change nothing here. */
  @Override
  public UpstreamFlags upstreamFlags() {
    // Upstream warns when a connection's channel fills; Portage's per-connection queues are paced by
    // credit (or closed one by one with upstream servers) and count it in metrics instead.
    return UpstreamFlags.pflag("proxy-agent").bool("--warn-on-channel-limit");
  }

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    TunnelAgentConfig config = toConfig();
    ScheduledExecutorService scheduler =
        TimeSource.newTimer("portage-agent-timer");
    try (TunnelAgent agent = new TunnelAgent(config, TimeSource.system(scheduler), ProcessMetrics.registry())) {
      agent.start();
      signals.await(agent::drain);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  /** The agent configuration these flags describe. */
  TunnelAgentConfig toConfig() {
    TunnelAgentConfig.ServerCountSource source;
    try {
      source = TunnelAgentConfig.ServerCountSource.fromFlag(serverCountSource);
      return TunnelAgentConfig.builder()
          .agentCert(agentCert)
          .agentKey(agentKey)
          .caCert(caCert)
          .proxyServerHost(proxyServerHost)
          .proxyServerPort(proxyServerPort)
          .alpnProtos(alpnProtos)
          .keyExchangeGroups(keyExchangeGroups.ianaNames())
          .healthServerHost(healthServerHost)
          .healthServerPort(healthServerPort)
          .adminBindAddress(adminBindAddress)
          .adminServerPort(adminServerPort)
          .agentId(agentId == null || agentId.isEmpty() ? UUID.randomUUID().toString() : agentId)
          .agentIdentifiers(agentIdentifiers)
          .syncInterval(syncInterval)
          .probeInterval(probeInterval)
          .syncIntervalCap(syncIntervalCap)
          .keepaliveTime(keepaliveTime)
          .serviceAccountTokenPath(serviceAccountTokenPath)
          .syncForever(syncForever)
          .xfrChannelSize(xfrChannelSize)
          .flowControlWindow(flowControl ? flowControlWindow : 0)
          .countServerLeases(countServerLeases)
          .leaseNamespace(leaseNamespace)
          .leaseLabelSelector(leaseLabelSelector)
          .serverCountSource(source)
          .kubeconfig(kubeconfig)
          .kubeApiContentType(kubeApiContentType)
          .enableProfiling(profiling.enableProfiling)
          .enableContentionProfiling(profiling.enableContentionProfiling)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

}
