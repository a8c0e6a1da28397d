package dev.portage.cli;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.FailureAccrual;
import dev.portage.core.time.TimeSource;
import dev.portage.proxy.mesh.Sidecar;
import dev.portage.proxy.mesh.SidecarConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage sidecar}: the Linkerd-style outbound L7 proxy, with Linkerd's ports and defaults.
 * Runs until SIGTERM or SIGINT, then closes the sidecar and exits 0.
 *
 * <p>linkerd2-proxy's environment variables are defaults for the flags ({@link LinkerdProxyEnv}):
 * a flag on the command line wins, then the variable, then the built-in default. Variables it does
 * not implement log one WARN line each.
 */
@Command(
    name = "sidecar",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Mesh sidecar: outbound HTTP/1.1 and h2c proxy balancing over endpoints from the Destination API.")
public final class SidecarCommand implements Callable<Integer>, LogDefaults.Source {
  private static final Logger log = LoggerFactory.getLogger(SidecarCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  private final LinkerdProxyEnv env;

  /** A command reading its defaults from the process environment. */
  public SidecarCommand() {
    this(System.getenv());
  }

  /** A command reading its defaults from {@code env} (tests). */
  SidecarCommand(Map<String, String> env) {
    this.env = new LinkerdProxyEnv(env);
  }

  @Option(names = "--destination-addr",
      description = "Control plane gRPC address, HOST:PORT (required unless LINKERD2_PROXY_DESTINATION_SVC_ADDR is set).")
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

  /** TLS to the control plane. */
  @Mixin ControlPlaneTlsOptions destinationTls = new ControlPlaneTlsOptions();

  @Option(names = "--io-threads", defaultValue = "0",
      description = "Event loops serving connections; 0 = one per core (or -Dio.netty.eventLoopThreads).")
  int ioThreads;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    SidecarConfig config = toConfig();
    warnWithoutEffect(config);
    ScheduledExecutorService scheduler = TimeSource.newTimer("portage-sidecar-timer");
    try (Sidecar sidecar = new Sidecar(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      sidecar.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  /** One WARN line per Linkerd variable that is set but changes nothing here. */
  void warnWithoutEffect(SidecarConfig config) {
    for (String name : env.withoutEffect()) {
      log.warn("environment variable {} is accepted for compatibility with linkerd2-proxy and has no effect in Portage", name);
    }
    if (env.get(LinkerdProxyEnv.DESTINATION_SVC_NAME) != null && config.destinationTls() == null) {
      log.warn("environment variable {} has no effect without --destination-ca: the control plane connection is plaintext",
          LinkerdProxyEnv.DESTINATION_SVC_NAME);
    }
  }

  @Override
  public LogDefaults logDefaults() {
    return env.logDefaults();
  }

  /** The sidecar configuration these flags (and Linkerd's environment variables) describe. */
  SidecarConfig toConfig() {
    try {
      String destination = given("--destination-addr") ? destinationAddr : env.get(LinkerdProxyEnv.DESTINATION_SVC_ADDR);
      if (destination == null) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "Missing required option: '--destination-addr' (or " + LinkerdProxyEnv.DESTINATION_SVC_ADDR + ")");
      }
      ListenAddress outbound = or("--outbound-bind-address", "--outbound-port", env.outbound(),
          new ListenAddress(outboundBindAddress, outboundPort));
      ListenAddress admin = or("--admin-bind-address", "--admin-port", env.address(LinkerdProxyEnv.ADMIN_LISTEN_ADDR),
          new ListenAddress(adminBindAddress, adminPort));
      return SidecarConfig.builder(destination)
          .destinationTls(destinationTls())
          .outboundBindAddress(outbound.host())
          .outboundPort(outbound.port())
          .adminBindAddress(admin.host())
          .adminPort(admin.port())
          .failfastTimeout(or("--failfast-timeout", failfastTimeout, env.duration(LinkerdProxyEnv.FAILFAST_TIMEOUT)))
          .ewmaDefaultRtt(ewmaDefaultRtt)
          .ewmaDecay(ewmaDecay)
          .ewmaFailurePenalty(ewmaFailurePenalty)
          .balancer(SidecarConfig.BalancerKind.fromFlag(balancer))
          .failureAccrual(accrual())
          .connectTimeout(or("--connect-timeout", connectTimeout, env.duration(LinkerdProxyEnv.CONNECT_TIMEOUT)))
          .reconnectBackoff(new BackoffPolicy(
              or("--connect-backoff-min", connectBackoffMin, env.duration(LinkerdProxyEnv.BACKOFF_MIN)),
              or("--connect-backoff-max", connectBackoffMax, env.duration(LinkerdProxyEnv.BACKOFF_MAX)),
              2.0,
              or("--connect-backoff-jitter", connectBackoffJitter, env.number(LinkerdProxyEnv.BACKOFF_JITTER))))
          .ioThreads(ioThreads)
          .build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  /** Whether {@code option} was on the command line (a variable then does not override it). */
  private boolean given(String option) {
    CommandLine.ParseResult r = spec.commandLine().getParseResult();
    return r != null && r.hasMatchedOption(option);
  }

  /** The flag's value when given, else the variable's when set, else the flag's default. */
  private <V> V or(String option, V flag, V fromEnv) {
    return given(option) || fromEnv == null ? flag : fromEnv;
  }

  /** An address from two flags (host, port) unless neither was given and the variable is set. */
  private ListenAddress or(String hostOption, String portOption, ListenAddress fromEnv, ListenAddress flags) {
    return given(hostOption) || given(portOption) || fromEnv == null ? flags : fromEnv;
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

  /** TLS to the control plane; Linkerd's destination name is the name to verify unless the flag gives one. */
  private ControlPlaneTls destinationTls() {
    return destinationTls.tls(env.get(LinkerdProxyEnv.DESTINATION_SVC_NAME));
  }
}
