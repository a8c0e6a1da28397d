package dev.portage.cli;

import dev.portage.core.time.TimeSource;
import dev.portage.proxy.mesh.Sidecar;
import dev.portage.proxy.mesh.SidecarConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code portage sidecar}: the Linkerd-style outbound L7 proxy, with Linkerd's ports and defaults.
 * Runs until SIGTERM or SIGINT, then closes the sidecar and exits 0.
 */
@Command(
    name = "sidecar",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Mesh sidecar: outbound HTTP/1.1 and h2c proxy balancing over endpoints from the Destination API.")
public final class SidecarCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(SidecarCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--destination-addr", required = true, description = "Control plane gRPC address, HOST:PORT.")
  String destinationAddr;

  @Option(names = "--outbound-port", defaultValue = "4140", description = "Outbound listener port (HTTP/1.1 and h2c).")
  int outboundPort;

  @Option(names = "--outbound-bind-address", defaultValue = "127.0.0.1", description = "Outbound listener address.")
  String outboundBindAddress;

  @Option(names = "--admin-port", defaultValue = "4191", description = "Admin port (/healthz, /readyz, /metrics).")
  int adminPort;

  @Option(names = "--admin-bind-address", defaultValue = "127.0.0.1", description = "Admin listener address.")
  String adminBindAddress;

  @Option(names = "--failfast-timeout", defaultValue = "3s", converter = GoDuration.class,
      description = "How long requests wait for a ready endpoint before the destination fails fast.")
  Duration failfastTimeout;

  @Option(names = "--ewma-default-rtt", defaultValue = "30ms", converter = GoDuration.class,
      description = "Peak-EWMA latency estimate of a new endpoint.")
  Duration ewmaDefaultRtt;

  @Option(names = "--ewma-decay", defaultValue = "10s", converter = GoDuration.class,
      description = "Peak-EWMA decay time constant.")
  Duration ewmaDecay;

  @Option(names = "--balancer", defaultValue = "p2c-ewma", description = "p2c-ewma | round-robin.")
  String balancer;

  @Option(names = "--io-threads", defaultValue = "0",
      description = "Event loops serving connections; 0 = one per core (or -Dio.netty.eventLoopThreads).")
  int ioThreads;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    SidecarConfig config = toConfig();
    ScheduledExecutorService scheduler = TimeSource.newTimer("portage-sidecar-timer");
    try (Sidecar sidecar = new Sidecar(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      sidecar.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  /** The sidecar configuration these flags describe. */
  SidecarConfig toConfig() {
    try {
      return new SidecarConfig(destinationAddr, outboundBindAddress, outboundPort, adminBindAddress, adminPort,
          failfastTimeout, ewmaDefaultRtt, ewmaDecay, SidecarConfig.BalancerKind.fromFlag(balancer),
          ioThreads);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }
}
