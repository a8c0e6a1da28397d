package dev.portage.cli;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.FailureAccrual;
import dev.portage.core.time.TimeSource;
import dev.portage.proxy.mesh.Sidecar;
import dev.portage.proxy.mesh.SidecarConfig;
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

  @Option(names = "--ewma-failure-penalty", defaultValue = "5s", converter = GoDuration.class,
      description = "Least latency peak-EWMA records for a failure (5xx, 429, connect error, reset); 0: their own latency.")
  Duration ewmaFailurePenalty;

  @Option(names = "--balancer", defaultValue = "p2c-ewma", description = "p2c-ewma | round-robin.")
  String balancer;

  @Option(names = "--failure-accrual", defaultValue = "none",
      description = "none | consecutive: shut an endpoint after consecutive failures, probe it after a backoff.")
  String failureAccrual;

  @Option(names = "--failure-accrual-consecutive-max-failures", defaultValue = "7",
      description = "Consecutive failures that shut an endpoint.")
  int accrualMaxFailures;

  @Option(names = "--failure-accrual-consecutive-min-penalty", defaultValue = "1s", converter = GoDuration.class,
      description = "First backoff of a shut endpoint (doubles per failed probe).")
  Duration accrualMinPenalty;

  @Option(names = "--failure-accrual-consecutive-max-penalty", defaultValue = "1m", converter = GoDuration.class,
      description = "Longest backoff of a shut endpoint.")
  Duration accrualMaxPenalty;

  @Option(names = "--failure-accrual-consecutive-jitter-ratio", defaultValue = "0.5",
      description = "Random extra share of each backoff, 0..1.")
  double accrualJitter;

  @Option(names = "--connect-timeout", defaultValue = "1s", converter = GoDuration.class,
      description = "TCP connect timeout to endpoints.")
  Duration connectTimeout;

  @Option(names = "--connect-backoff-min", defaultValue = "100ms", converter = GoDuration.class,
      description = "First wait before reconnecting to an endpoint whose connect failed (doubles per failure).")
  Duration connectBackoffMin;

  @Option(names = "--connect-backoff-max", defaultValue = "60s", converter = GoDuration.class,
      description = "Longest wait between reconnects.")
  Duration connectBackoffMax;

  @Option(names = "--connect-backoff-jitter", defaultValue = "0.1",
      description = "Random extra share of each reconnect wait, 0..1.")
  double connectBackoffJitter;

  @Option(names = "--destination-ca", description = "PEM CA of the control plane's certificate: TLS to the control plane.")
  Path destinationCa;

  @Option(names = "--destination-cert", description = "PEM client certificate for the control plane (with --destination-key).")
  Path destinationCert;

  @Option(names = "--destination-key", description = "PEM key of --destination-cert.")
  Path destinationKey;

  @Option(names = "--destination-server-name",
      description = "Name to verify in the control plane's certificate (default: the host of --destination-addr).")
  String destinationServerName;

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
      return SidecarConfig.builder(destinationAddr)
          .destinationTls(destinationTls())
          .outboundBindAddress(outboundBindAddress)
          .outboundPort(outboundPort)
          .adminBindAddress(adminBindAddress)
          .adminPort(adminPort)
          .failfastTimeout(failfastTimeout)
          .ewmaDefaultRtt(ewmaDefaultRtt)
          .ewmaDecay(ewmaDecay)
          .ewmaFailurePenalty(ewmaFailurePenalty)
          .balancer(SidecarConfig.BalancerKind.fromFlag(balancer))
          .failureAccrual(accrual())
          .connectTimeout(connectTimeout)
          .reconnectBackoff(new BackoffPolicy(connectBackoffMin, connectBackoffMax, 2.0, connectBackoffJitter))
          .ioThreads(ioThreads)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  private FailureAccrual.Settings accrual() {
    return switch (failureAccrual.toLowerCase(Locale.ROOT)) {
      case "none" -> null;
      case "consecutive" ->
          new FailureAccrual.Settings(accrualMaxFailures, accrualMinPenalty, accrualMaxPenalty, accrualJitter);
      default -> throw new IllegalArgumentException(
          "--failure-accrual: " + failureAccrual + " (expected: none or consecutive)");
    };
  }

  /** TLS to the control plane when a CA or a client certificate is given; plaintext otherwise. */
  private ControlPlaneTls destinationTls() {
    if (destinationCa == null && destinationCert == null && destinationKey == null) {
      return null;
    }
    return new ControlPlaneTls(destinationCa, destinationCert, destinationKey, destinationServerName);
  }
}
