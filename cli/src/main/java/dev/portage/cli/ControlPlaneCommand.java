package dev.portage.cli;

import dev.portage.control.ControlPlane;
import dev.portage.cli.flags.UpstreamCompatible;
import dev.portage.cli.flags.UpstreamFlags;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.control.destination.DestinationConfig;
import dev.portage.core.time.TimeSource;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code portage control-plane}: streams rules (dds {@code RuleService}) and endpoints and profiles
 * (Linkerd {@code Destination}) from a manifest directory or a Kubernetes cluster, on one gRPC port.
 * Runs until SIGTERM or SIGINT, then closes every stream with UNAVAILABLE and exits 0.
 *
 * <p>Also takes the Linkerd destination controller's flags in Go's single-dash form, as its
 * manifests pass them ({@code -addr=:8086 -metrics-addr=:9996 -cluster-domain=cluster.local ...}):
 * {@code -addr}, {@code -metrics-addr}, {@code -kubeconfig}, {@code -cluster-domain}, {@code
 * -stream-queue-capacity}, {@code -log-level}, {@code -log-format} and {@code -version} take effect;
 * the others are accepted with one WARN line each.
 */
@Command(
    name = "control-plane",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Control plane: dds rule push and the Linkerd Destination API from files or Kubernetes.")
public final class ControlPlaneCommand implements Callable<Integer>, UpstreamCompatible {
  private static final Logger log = LoggerFactory.getLogger(ControlPlaneCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--source", description = "files | kubernetes: where rules and services come from (default: kubernetes with --kubeconfig, else files).")
  String source;

  @Option(names = "--dir", description = "Manifest directory for --source files (default: the bundled examples).")
  Path dir;

  @Option(names = "--kubeconfig", description = "Kubeconfig for --source kubernetes (default: in-cluster or ~/.kube/config); selects that source. Empty: the default.")
  String kubeconfig;

  @Option(names = "--grpc-bind-address", defaultValue = ControlPlaneConfig.DEFAULT_GRPC_BIND_ADDRESS, description = "Address of the gRPC port.")
  String grpcBindAddress;

  @Option(names = "--grpc-port", defaultValue = "8086", description = "gRPC port serving RuleService and Destination.")
  int grpcPort;

  @Option(names = "--tls-cert", description = "Server certificate chain (PEM); turns TLS on for the gRPC port.")
  Path tlsCert;

  @Option(names = "--tls-key", description = "Private key (PEM) of --tls-cert.")
  Path tlsKey;

  @Option(names = "--client-ca", description = "CA (PEM) that client certificates must chain to; requires them (mTLS).")
  Path clientCa;

  @Option(names = "--admin-bind-address", defaultValue = ControlPlaneConfig.DEFAULT_ADMIN_BIND_ADDRESS, description = "Admin listener address.")
  String adminBindAddress;

  @Option(names = "--admin-port", defaultValue = "9996", description = "Admin port: /healthz, /readyz, /ping, /ready, /metrics, /status.")
  int adminPort;

  @Option(names = "--addr", paramLabel = "[HOST]:PORT",
      description = "Linkerd destination's gRPC address (-addr=:8086); sets --grpc-bind-address (empty host: 0.0.0.0) and --grpc-port.")
  String addr;

  @Option(names = "--metrics-addr", paramLabel = "[HOST]:PORT",
      description = "Linkerd destination's admin address (-metrics-addr=:9996); sets --admin-bind-address (empty host: 0.0.0.0) and --admin-port.")
  String metricsAddr;

  @Option(names = "--cluster-domain", defaultValue = DestinationConfig.DEFAULT_CLUSTER_DOMAIN,
      description = "Suffix of service names (web.ns.svc.<domain>); empty: cluster.local.")
  String clusterDomain;

  @Option(names = "--stream-queue-capacity", defaultValue = "100",
      description = "Updates a Destination Get stream may hold unsent before it is closed.")
  int streamQueueCapacity;

  @Option(names = "--debounce-after", defaultValue = "100ms", converter = GoDuration.class, description = "Quiet time after a rule change before it is pushed (Go duration).")
  Duration debounceAfter;

  @Option(names = "--debounce-max", defaultValue = "1s", converter = GoDuration.class, description = "Longest a changing rule type waits before it is pushed.")
  Duration debounceMax;

  @Option(names = "--ack-timeout", defaultValue = "30s", converter = GoDuration.class, description = "A dds push not acknowledged within this closes the stream.")
  Duration ackTimeout;

  @Option(names = "--require-auth", arity = "0..1", fallbackValue = "true", defaultValue = "false", description = "Refuse dds clients without a client certificate or a valid service-account token.")
  boolean requireAuth;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    ControlPlaneConfig config = toConfig();
    ScheduledExecutorService scheduler =
        TimeSource.newTimer("portage-control-timer");
    try (ControlPlane plane = new ControlPlane(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      plane.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  @Override
  public UpstreamFlags upstreamFlags() {
    return UpstreamFlags.goFlag("the Linkerd destination controller")
        .value("--controller-namespace", "--outbound-transport-mode", "--identity-trust-domain",
            "--default-opaque-ports", "--meshed-http2-client-params", "--trace-collector")
        .bool("--enable-h2-upgrade", "--enable-endpoint-slices", "--enable-ipv6", "--enable-pprof",
            "--export-queue-metrics", "--ext-endpoint-zone-weights");
  }

  /** The control-plane configuration these flags describe. */
  ControlPlaneConfig toConfig() {
    Path kubeconfig = this.kubeconfig == null || this.kubeconfig.isEmpty() ? null : Path.of(this.kubeconfig);
    String source = this.source != null ? this.source : kubeconfig != null ? "kubernetes" : "files";
    ControlPlaneConfig.SourceType type = switch (source.toLowerCase(Locale.ROOT)) {
      case "files" -> ControlPlaneConfig.SourceType.FILES;
      case "kubernetes" -> ControlPlaneConfig.SourceType.KUBERNETES;
      default -> throw new CommandLine.ParameterException(
          spec.commandLine(), "--source: '" + source + "' (expected: files or kubernetes)");
    };
    if (type == ControlPlaneConfig.SourceType.KUBERNETES && dir != null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--dir is only for --source files");
    }
    if (type == ControlPlaneConfig.SourceType.FILES && kubeconfig != null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--kubeconfig is only for --source kubernetes");
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--tls-cert and --tls-key go together");
    }
    if (clientCa != null && tlsCert == null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--client-ca needs --tls-cert and --tls-key");
    }
    try {
      ListenAddress grpc = ListenAddress.parse("--addr", addr, grpcBindAddress, grpcPort);
      ListenAddress admin = ListenAddress.parse("--metrics-addr", metricsAddr, adminBindAddress, adminPort);
      return ControlPlaneConfig.builder()
          .source(type)
          .dir(dir)
          .kubeconfig(kubeconfig)
          .grpcBindAddress(grpc.host())
          .grpcPort(grpc.port())
          .tls(tlsCert, tlsKey, clientCa)
          .adminBindAddress(admin.host())
          .adminPort(admin.port())
          .destination(new DestinationConfig(
              clusterDomain.isEmpty() ? DestinationConfig.DEFAULT_CLUSTER_DOMAIN : clusterDomain,
              streamQueueCapacity, DestinationConfig.DEFAULT_ENDPOINT_WEIGHT))
          .debounce(debounceAfter, debounceMax)
          .ackTimeout(ackTimeout)
          .requireAuth(requireAuth)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }
}
