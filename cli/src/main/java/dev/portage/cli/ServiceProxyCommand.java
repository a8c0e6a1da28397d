package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
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
 * {@code portage service-proxy}: the kube-proxy-style L4 proxy, with kube-proxy's sync flag names and
 * defaults. Runs until SIGTERM or SIGINT, then closes every listener and connection and exits 0.
 */
@Command(
    name = "service-proxy",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "kube-proxy-style L4 proxy: one listener per service port, TCP connections balanced over endpoints.")
public final class ServiceProxyCommand implements Callable<Integer> {
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

  @Option(names = "--bind-address", defaultValue = "0.0.0.0", description = "Host the Kubernetes source's listeners bind (with each Service port).")
  String bindAddress;

  @Option(names = "--min-sync-period", defaultValue = "1s", converter = GoDuration.class,
      description = "Least time between syncs after a burst of 2 (Go duration).")
  Duration minSyncPeriod;

  @Option(names = "--sync-period", defaultValue = "30s", converter = GoDuration.class,
      description = "Most time between syncs (Go duration).")
  Duration syncPeriod;

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

  /** The proxy configuration these flags describe. */
  ServiceProxyConfig toConfig() {
    try {
      return ServiceProxyConfig.builder()
          .endpointsFile(endpointsFile)
          .kubernetes(kubernetes)
          .kubeconfig(kubeconfig)
          .destinationAddr(destinationAddr)
          .bindAddress(bindAddress)
          .minSyncPeriod(minSyncPeriod)
          .syncPeriod(syncPeriod)
          .adminBindAddress(adminBindAddress)
          .adminPort(adminPort)
          .closeRemovedEndpointConnections(closeRemovedEndpointConnections)
          .ioThreads(ioThreads)
          .maxReadSize(maxReadSize)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }
}
