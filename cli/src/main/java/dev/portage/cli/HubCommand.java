package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
import dev.portage.cli.flags.UpstreamCompatible;
import dev.portage.cli.flags.UpstreamFlags;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.EdgeHub;
import dev.portage.hub.EdgeHubConfig;
import dev.portage.hub.WorkingMode;
import dev.portage.hub.bootstrap.NodeBootstrap;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.remote.Upstreams;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage hub}: the edge hub with YurtHub's flags and defaults, so a YurtHub manifest starts
 * it unchanged. Every flag of YurtHub v1.7 is accepted in pflag's forms: those with a meaning here
 * take effect, the others ({@link #upstreamFlags()}) log one WARN line each. SIGTERM or SIGINT
 * closes the hub and exits 0.
 */
@Command(
    name = "hub",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Edge hub: reverse proxy to the API servers with a disk cache that answers while the cloud is unreachable (YurtHub).")
public final class HubCommand implements Callable<Integer>, UpstreamCompatible {
  private static final Logger log = LoggerFactory.getLogger(HubCommand.class);

  /** YurtHub v1.7 flags whose features the hub does not have (and a few of older releases). */
  static final UpstreamFlags WITHOUT_EFFECT = UpstreamFlags.pflag("YurtHub")
      .value("--multiplexer-port", "--node-ip", "--kubelet-health-grace-period", "--gc-frequency",
          "--hub-cert-organizations", "--dummy-if-ip", "--dummy-if-name",
          "--disabled-resource-filters", "--pool-scope-resources", "--kubeconfig", "--hub-cert-dir")
      .bool("--enable-dummy-if", "--enable-resource-filter", "--enable-pool-service-topology",
          "--enable-iptables", "--enable-node-pool", "--access-server-through-hub");

  /** klog's flags, as upstream manifests pass them ({@code --v=2}). */
  @Mixin KlogOptions klog = new KlogOptions();

  @Option(names = "--server-addr", required = true, split = ",", description = "API server URLs, comma separated (http:// or https://).")
  List<String> serverAddr;

  @Option(names = "--node-name", required = true, description = "Name of the node the hub runs on (required, as in YurtHub): the kubelet's cache keeps only this Node and its Lease, whose renewals and status updates are answered locally while the cloud is unreachable.")
  String nodeName;

  @Option(names = "--working-mode", defaultValue = "edge", description = "edge (cache and answer offline), cloud (proxy only, nothing cached) or local (as cloud).")
  String workingMode;

  @Option(names = "--nodepool-name", defaultValue = "", description = "Node pool of the node; shown in the start-up log and on the dashboard.")
  String nodePoolName;

  @Option(names = "--lb-mode", defaultValue = "rr", description = "Load balancing over healthy API servers: rr or priority (first healthy in --server-addr order).")
  String lbMode;

  @Option(names = "--bind-address", defaultValue = "127.0.0.1", description = "Address of the hub server (--serve-port).")
  String bindAddress;

  @Option(names = "--bind-proxy-address", defaultValue = "127.0.0.1", description = "Address of the proxy ports (--proxy-port, --proxy-secure-port).")
  String bindProxyAddress;

  @Option(names = "--proxy-port", defaultValue = "10261", description = "Plain HTTP proxy port for node components.")
  int proxyPort;

  @Option(names = "--proxy-secure-port", defaultValue = "10268", description = "TLS proxy port; opened when the hub has a server certificate (--tls-cert-file, or pki/yurthub-server-current.pem under --root-dir).")
  int proxySecurePort;

  @Option(names = "--serve-port", defaultValue = "10267", description = "Hub server port: /v1/healthz, /v1/readyz, /metrics, POST /v1/token, /debug/pprof/.")
  int servePort;

  @Option(names = "--disk-cache-path", defaultValue = "/etc/kubernetes/cache/", description = "Cache directory.")
  Path diskCachePath;

  @Option(names = "--root-dir", defaultValue = "/var/lib/yurthub", description = "The hub's own directory: pki/ca.crt, pki/yurthub-current.pem (client certificate) and pki/yurthub-server-current.pem (secure port) are used when the TLS flags are not given.")
  Path rootDir;

  @Option(names = "--bootstrap-file", description = "Bootstrap kubeconfig: its cluster CA (stored as pki/ca.crt under --root-dir) and its token (sent like --join-token) are used when the TLS flags and --join-token are not given.")
  Path bootstrapFile;

  @Option(names = "--bootstrap-mode", defaultValue = "token", description = "token, or kubeletcertificate: use the kubelet's client certificate /var/lib/kubelet/pki/kubelet-client-current.pem.")
  String bootstrapMode;

  @Option(names = "--join-token", defaultValue = "", description = "Bootstrap token sent on requests without credentials (update at runtime with POST /v1/token).")
  String joinToken;

  @Option(names = "--discovery-token-ca-cert-hash", split = ",", description = "Pins of the cluster CA's public key (sha256:<hex>, as kubeadm prints them); the hub does not start with a CA that matches none.")
  List<String> caCertHashes = new ArrayList<>();

  @Option(names = "--discovery-token-unsafe-skip-ca-verification", arity = "0..1", fallbackValue = "true", defaultValue = "true", description = "Allow starting without --discovery-token-ca-cert-hash (default: ${DEFAULT-VALUE}).")
  boolean unsafeSkipCaVerification;

  @Option(names = "--namespace", defaultValue = "kube-system", description = "Namespace of the yurt-hub-cfg ConfigMap whose cache_agents adds components to cache.")
  String namespace;

  @Option(names = "--host-control-plane-address", defaultValue = "", description = "Required with --working-mode=local, as in YurtHub; has no effect here.")
  String hostControlPlaneAddress;

  @Option(names = "--profiling", arity = "0..1", fallbackValue = "true", defaultValue = "true", description = "Serve thread dumps on /debug/pprof/ of the hub server (default: ${DEFAULT-VALUE}).")
  boolean profiling;

  @Option(names = "--heartbeat-interval-seconds", defaultValue = "10", description = "Seconds between health checks of one API server.")
  int heartbeatIntervalSeconds;

  @Option(names = "--heartbeat-timeout-seconds", defaultValue = "2", description = "Seconds a health check may take.")
  int heartbeatTimeoutSeconds;

  @Option(names = "--heartbeat-healthy-threshold", defaultValue = "2", description = "Consecutive successes that make a server healthy again.")
  int heartbeatHealthyThreshold;

  @Option(names = "--heartbeat-failed-retry", defaultValue = "3", description = "Consecutive failures that make a server unhealthy.")
  int heartbeatFailedRetry;

  @Option(names = "--max-requests-in-flight", defaultValue = "250", description = "Non-watch requests in flight before 429.")
  int maxRequestsInFlight;

  @Option(names = "--min-request-timeout", defaultValue = "1800s", converter = GoDuration.class, description = "Offline watches end after this x U[1,2) (Go duration).")
  Duration minRequestTimeout;

  @Option(names = "--cache-agents", split = ",", description = "Extra components to cache (User-Agent up to '/'); '*' for all. Always cached: kubelet, kube-proxy, flanneld, coredns.")
  List<String> cacheAgents = new ArrayList<>();

  @Option(names = "--ca-file", description = "CA of the API servers' certificates (default: see --bootstrap-file and --root-dir, else the JDK trust store).")
  Path caFile;

  @Option(names = "--client-cert-file", description = "Client certificate presented to the API servers (default: see --bootstrap-file, --root-dir and --bootstrap-mode).")
  Path clientCertFile;

  @Option(names = "--client-key-file", description = "Private key of --client-cert-file.")
  Path clientKeyFile;

  @Option(names = "--tls-cert-file", description = "Server certificate of the secure proxy port (Portage flag).")
  Path tlsCertFile;

  @Option(names = "--tls-private-key-file", description = "Private key of --tls-cert-file (Portage flag).")
  Path tlsPrivateKeyFile;

  @Override
  public UpstreamFlags upstreamFlags() {
    return WITHOUT_EFFECT;
  }

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    EdgeHubConfig config = toConfig();
    if (!hostControlPlaneAddress.isEmpty()) {
      log.warn("flag --host-control-plane-address has no effect: the {} working mode proxies to"
          + " --server-addr", workingMode);
    }
    ScheduledExecutorService scheduler = TimeSource.newTimer("portage-hub-timer");
    try (EdgeHub hub = new EdgeHub(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      hub.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  /** The hub settings the flags describe; throws IllegalArgumentException (exit 2) on bad input. */
  EdgeHubConfig toConfig() {
    if (nodeName.isBlank()) {
      throw new IllegalArgumentException("--node-name: empty (expected: the name of the node the hub runs on)");
    }
    WorkingMode mode = WorkingMode.parse(workingMode);
    if (mode == WorkingMode.LOCAL && hostControlPlaneAddress.isEmpty()) {
      throw new IllegalArgumentException(
          "--host-control-plane-address: empty (expected: the host control plane's address with --working-mode=local)");
    }
    Upstreams.LbMode lb = switch (lbMode) {
      case "rr" -> Upstreams.LbMode.RR;
      case "priority" -> Upstreams.LbMode.PRIORITY;
      default -> throw new IllegalArgumentException(
          "--lb-mode: " + lbMode + " (expected: rr or priority)");
    };
    Set<String> agents = new HashSet<>(CachePolicy.DEFAULT_COMPONENTS);
    for (String a : cacheAgents) {
      if (!a.isBlank()) {
        agents.add(a.trim());
      }
    }
    if (heartbeatIntervalSeconds < 1 || heartbeatTimeoutSeconds < 1) {
      throw new IllegalArgumentException("--heartbeat-interval-seconds and --heartbeat-timeout-seconds: "
          + heartbeatIntervalSeconds + ", " + heartbeatTimeoutSeconds + " (expected: >= 1)");
    }
    if (heartbeatHealthyThreshold < 1 || heartbeatFailedRetry < 1) {
      throw new IllegalArgumentException("--heartbeat-healthy-threshold and --heartbeat-failed-retry: "
          + heartbeatHealthyThreshold + ", " + heartbeatFailedRetry + " (expected: >= 1)");
    }
    Upstreams.Heartbeat heartbeat = new Upstreams.Heartbeat(
        Duration.ofSeconds(heartbeatIntervalSeconds), Duration.ofSeconds(heartbeatTimeoutSeconds),
        heartbeatHealthyThreshold, heartbeatFailedRetry);
    NodeBootstrap bootstrap = new NodeBootstrap(rootDir, bootstrapFile,
        NodeBootstrap.Mode.parse(bootstrapMode),
        caCertHashes.stream().filter(h -> !h.isBlank()).toList(), unsafeSkipCaVerification);
    return EdgeHubConfig.builder(serverAddr, diskCachePath)
        .lbMode(lb)
        .bindAddresses(bindAddress, bindProxyAddress)
        .ports(proxyPort, proxySecurePort, servePort)
        .heartbeat(heartbeat)
        .maxRequestsInFlight(maxRequestsInFlight)
        .minRequestTimeout(minRequestTimeout)
        .cacheAgents(agents)
        .tls(caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsPrivateKeyFile)
        .bootstrapToken(joinToken)
        .nodeName(nodeName)
        .workingMode(mode)
        .nodePoolName(nodePoolName)
        .namespace(namespace)
        .profiling(profiling)
        .bootstrap(bootstrap)
        .build();
  }
}
