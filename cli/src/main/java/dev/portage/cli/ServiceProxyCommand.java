package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
import dev.portage.cli.flags.UpstreamCompatible;
import dev.portage.cli.flags.UpstreamFlags;
import dev.portage.proxy.service.ProxyMode;
import dev.portage.proxy.service.nftables.NftablesOptions;
import java.util.List;
import dev.portage.core.time.TimeSource;
import dev.portage.proxy.service.ServiceProxy;
import dev.portage.proxy.service.ServiceProxyConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage service-proxy}: the kube-proxy-style service proxy, with kube-proxy's flags, config
 * file ({@code --config}), defaults, health server and metric names. Runs until SIGTERM or SIGINT,
 * then closes every listener and connection and exits 0 (the nftables rules stay, as kube-proxy's
 * do, so traffic keeps flowing across a restart).
 */
@Command(
    name = "service-proxy",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "kube-proxy-style service proxy: nftables DNAT (--proxy-mode nftables) or a userspace TCP relay.")
public final class ServiceProxyCommand implements Callable<Integer>, UpstreamCompatible {

  /** kube-proxy's flags that Portage accepts and does not implement; each used one logs one WARN. */
  static final UpstreamFlags KUBE_PROXY_FLAGS = UpstreamFlags.pflag("kube-proxy")
      .bool("--conntrack-tcp-be-liberal", "--profiling", "--bind-address-hard-fail", "--init-only",
          "--cleanup", "--ipvs-strict-arp", "--iptables-localhost-nodeports", "--windows-service",
          "--enable-dsr")
      .value("--detect-local-mode", "--conntrack-max-per-core", "--conntrack-min",
          "--conntrack-tcp-timeout-established", "--conntrack-tcp-timeout-close-wait",
          "--conntrack-udp-timeout", "--conntrack-udp-timeout-stream", "--master",
          "--kube-api-content-type", "--kube-api-qps", "--kube-api-burst", "--config-sync-period",
          "--oom-score-adj", "--feature-gates", "--write-config-to", "--healthz-port", "--metrics-port",
          "--proxy-port-range", "--ipvs-scheduler", "--ipvs-sync-period", "--ipvs-min-sync-period",
          "--ipvs-exclude-cidrs", "--ipvs-tcp-timeout", "--ipvs-tcpfin-timeout", "--ipvs-udp-timeout",
          "--pod-bridge-interface", "--pod-interface-name-prefix", "--show-hidden-metrics-for-version",
          "--network-name", "--source-vip", "--kube-api-burst-per-second");
  private static final Logger log = LoggerFactory.getLogger(ServiceProxyCommand.class);

  /** klog's flags, as upstream manifests pass them. */
  @Mixin KlogOptions klog = new KlogOptions();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--endpoints-file", description = "YAML file of services (listen address, endpoints or authority); re-read when it changes.")
  Path endpointsFile;

  @Option(names = "--kubeconfig", description = "Read Services and EndpointSlices from the cluster this kubeconfig names.")
  Path kubeconfig;

  @Option(names = "--kubernetes", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Read Services and EndpointSlices with the in-cluster (or default) client config.")
  boolean kubernetes;

  @Option(names = "--destination-addr", description = "Control plane Destination API host:port; resolves the authorities listed in --endpoints-file.")
  String destinationAddr;

  /** TLS to the control plane of --destination-addr. */
  @Mixin ControlPlaneTlsOptions destinationTls = new ControlPlaneTlsOptions();

  @Option(names = "--bind-address", defaultValue = "0.0.0.0", description = "Host the userspace relay's listeners bind (ports of its choosing; nftables redirects Service addresses to them).")
  String bindAddress;

  @Option(names = {"--min-sync-period", "--iptables-min-sync-period"}, defaultValue = "1s", converter = GoDuration.class,
      description = "Least time between syncs after a burst of 2 (Go duration).")
  Duration minSyncPeriod;

  @Option(names = {"--sync-period", "--iptables-sync-period"}, defaultValue = "30s", converter = GoDuration.class,
      description = "nftables: retry delay after a failed sync and half the health timeout; userspace: most time between syncs (Go duration).")
  Duration syncPeriod;

  @Option(names = "--proxy-mode", defaultValue = "",
      description = "nftables (kernel DNAT; the default with --kubernetes/--kubeconfig) or userspace (relay); iptables and ipvs run nftables with a WARN.")
  String proxyMode;

  @Option(names = "--config", description = "A KubeProxyConfiguration file (kubeproxy.config.k8s.io/v1alpha1); its fields win over flags, except --hostname-override and logging.")
  Path configFile;

  @Option(names = "--hostname-override", description = "This node's name: endpoints with this nodeName are local (default: $NODE_NAME or the host name, lower-cased).")
  String hostnameOverride;

  @Option(names = "--cluster-cidr", description = "Pod CIDR: ClusterIP traffic from outside it is masqueraded (kube-proxy's local traffic detector).")
  String clusterCidr;

  @Option(names = "--masquerade-all", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Masquerade all traffic to ClusterIPs.")
  boolean masqueradeAll;

  @Option(names = "--iptables-masquerade-bit", defaultValue = "14", description = "Packet mark bit that asks for masquerading (0-31).")
  int masqueradeBit;

  @Option(names = "--nodeport-addresses", split = ",",
      description = "CIDRs of the node addresses NodePorts answer on; 'primary' or unset: every local address but loopback.")
  List<String> nodePortAddresses;

  @Option(names = "--healthz-bind-address", defaultValue = "0.0.0.0:10256",
      description = "host:port of the health server (/healthz, /livez, kube-proxy's semantics); empty disables it.")
  String healthzBindAddress;

  @Option(names = "--metrics-bind-address",
      description = "host:port of the metrics server (/metrics, /healthz, /proxyMode); overrides --admin-bind-address and --admin-port; empty disables it.")
  String metricsBindAddress;

  @Option(names = "--nftables-table", defaultValue = NftablesOptions.DEFAULT_TABLE,
      description = "Name of the proxy's own nftables table (family ip).")
  String nftablesTable;

  @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", description = "Admin listener address.")
  String adminBindAddress;

  @Option(names = "--admin-port", defaultValue = "10249", description = "Admin listener port (/healthz, /readyz, /metrics); -1 disables it.")
  int adminPort;

  @Option(names = "--close-removed-endpoint-connections", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Close connections to an endpoint when it leaves its service (default: let them finish).")
  boolean closeRemovedEndpointConnections;

  @Option(names = "--io-threads", defaultValue = "0",
      description = "Event loops relaying connections; 0 = Netty's default (2 x cores, or -Dio.netty.eventLoopThreads).")
  int ioThreads;

  @Option(names = "--max-read-size", defaultValue = "1048576",
      description = "Most bytes one read of a relayed socket takes (reads grow toward it on bulk transfers; 4096-16777216).")
  int maxReadSize;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    ServiceProxyConfig config = toConfig();
    ScheduledExecutorService scheduler = TimeSource.newTimer("portage-service-proxy-sync");
    try (ServiceProxy proxy = new ServiceProxy(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      proxy.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  @Override
  public UpstreamFlags upstreamFlags() {
    return KUBE_PROXY_FLAGS;
  }

  /** The proxy configuration these flags (and {@code --config}) describe. */
  ServiceProxyConfig toConfig() {
    try {
      if (configFile != null) {
        KubeProxyConfigFile.read(configFile).applyTo(this);
      }
      ProxyMode mode = switch (proxyMode) {
        case "" -> null;
        case "nftables" -> ProxyMode.NFTABLES;
        case "userspace" -> ProxyMode.USERSPACE;
        case "iptables", "ipvs", "kernelspace" -> {
          log.warn("--proxy-mode {}: not implemented; using nftables (same Service semantics, kernel DNAT)", proxyMode);
          yield ProxyMode.NFTABLES;
        }
        default -> throw new IllegalArgumentException(
            "--proxy-mode: " + proxyMode + " (expected: nftables, userspace, iptables or ipvs)");
      };
      ServiceProxyConfig.Builder builder = ServiceProxyConfig.builder()
          .endpointsFile(endpointsFile)
          .kubernetes(kubernetes)
          .kubeconfig(kubeconfig)
          .destinationAddr(destinationAddr)
          .destinationTls(destinationTls.tls(null))
          .bindAddress(bindAddress)
          .minSyncPeriod(minSyncPeriod)
          .syncPeriod(syncPeriod)
          .adminBindAddress(adminBindAddress)
          .adminPort(adminPort)
          .closeRemovedEndpointConnections(closeRemovedEndpointConnections)
          .ioThreads(ioThreads)
          .maxReadSize(maxReadSize)
          .proxyMode(mode)
          .hostname(hostnameOverride == null || hostnameOverride.isBlank()
              ? null : hostnameOverride.strip().toLowerCase(java.util.Locale.ROOT))
          .nftables(new NftablesOptions(nftablesTable, blankToNull(clusterCidr), masqueradeAll,
              nodePortCidrs(nodePortAddresses), masqueradeBit));
      if (metricsBindAddress != null) {
        ListenAddress metrics = ListenAddress.parseOptionalPort("--metrics-bind-address", metricsBindAddress, ServiceProxyConfig.DEFAULT_ADMIN_PORT);
        builder.adminBindAddress(metrics == null ? adminBindAddress : metrics.host())
            .adminPort(metrics == null ? -1 : metrics.port());
      }
      ListenAddress health = ListenAddress.parseOptionalPort("--healthz-bind-address", healthzBindAddress, ServiceProxyConfig.DEFAULT_HEALTHZ_PORT);
      builder.healthzBindAddress(health == null ? "0.0.0.0" : health.host()).healthzPort(health == null ? -1 : health.port());
      return builder.build();
    } catch (IllegalArgumentException | java.io.IOException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  /**
   * {@code --nodeport-addresses}: IPv4 CIDRs; {@code primary}, {@code 0.0.0.0/0} or nothing mean every
   * local address (this proxy does not read the Node object for its primary IPs).
   */
  static List<String> nodePortCidrs(List<String> values) {
    List<String> cidrs = new java.util.ArrayList<>();
    if (values == null) {
      return cidrs;
    }
    for (String raw : values) {
      String value = raw.strip();
      if (value.isEmpty() || value.equals("primary") || value.equals("0.0.0.0/0")) {
        return List.of();
      }
      if (value.contains(":")) {
        log.warn("--nodeport-addresses {}: IPv6 is not served; ignored", value);
        continue;
      }
      if (!value.matches("\\d{1,3}(\\.\\d{1,3}){3}/\\d{1,2}")) {
        throw new IllegalArgumentException("--nodeport-addresses: " + value + " (expected: CIDRs such as 10.0.0.0/8, or primary)");
      }
      cidrs.add(value);
    }
    return cidrs;
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}
