package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.FailureAccrual;
import dev.portage.proxy.mesh.SidecarConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.portage.cli.flags.LogSettings;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

class SidecarCommandTest {

  private static SidecarConfig parse(String... args) {
    return parse(Map.of(), args);
  }

  private static SidecarConfig parse(Map<String, String> env, String... args) {
    return command(env, args).toConfig();
  }

  private static SidecarCommand command(Map<String, String> env, String... args) {
    SidecarCommand command = new SidecarCommand(env);
    new CommandLine(command).parseArgs(args);
    return command;
  }

  /** linkerd2-proxy's environment of an injected pod (the values Linkerd's injector writes, some changed). */
  private static final Map<String, String> LINKERD_ENV = Map.ofEntries(
      Map.entry("LINKERD2_PROXY_DESTINATION_SVC_ADDR", "linkerd-dst-headless.linkerd.svc.cluster.local.:8086"),
      Map.entry("LINKERD2_PROXY_DESTINATION_SVC_NAME", "linkerd-destination.linkerd.serviceaccount.identity.linkerd.cluster.local"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR", "127.0.0.3:5140"),
      Map.entry("LINKERD2_PROXY_ADMIN_LISTEN_ADDR", "0.0.0.0:5191"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT", "2s"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_CONNECT_EXP_BACKOFF_MIN", "50ms"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_CONNECT_EXP_BACKOFF_MAX", "1m"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_CONNECT_EXP_BACKOFF_JITTER", "0.2"),
      Map.entry("LINKERD2_PROXY_OUTBOUND_HTTP_FAILFAST_TIMEOUT", "1s"),
      Map.entry("LINKERD2_PROXY_LOG", "warn,linkerd=info,hickory=error"),
      Map.entry("LINKERD2_PROXY_LOG_FORMAT", "plain"),
      Map.entry("LINKERD2_PROXY_INBOUND_LISTEN_ADDR", "0.0.0.0:4143"),
      Map.entry("LINKERD2_PROXY_IDENTITY_DIR", "/var/run/linkerd/identity/end-entity"),
      Map.entry("PATH", "/usr/bin"));

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  @Test
  void defaultsMatchLinkerd() {
    SidecarConfig c = parse("--destination-addr=control:8086");
    assertThat(c).isEqualTo(SidecarConfig.defaults("control:8086"));
    assertThat(c.outboundPort()).isEqualTo(4140);
    assertThat(c.outboundBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminPort()).isEqualTo(4191);
    assertThat(c.failfastTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.ewmaDefaultRtt()).isEqualTo(Duration.ofMillis(30));
    assertThat(c.ewmaDecay()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.balancer()).isEqualTo(SidecarConfig.BalancerKind.P2C_EWMA);
    assertThat(c.ioThreads()).isZero();
    assertThat(c.failureAccrual()).as("off, as in Linkerd").isNull();
    assertThat(c.destinationTls()).isNull();
    assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.reconnectBackoff()).isEqualTo(BackoffPolicy.LINKERD);
    assertThat(c.ewmaFailurePenalty()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void consecutiveAccrualDefaultsAreLinkerds() {
    SidecarConfig c = parse("--destination-addr=c:1", "--failure-accrual=consecutive");
    assertThat(c.failureAccrual()).isEqualTo(FailureAccrual.Settings.LINKERD);
  }

  @Test
  void everyFlagIsMapped() {
    SidecarConfig c = parse("--destination-addr=10.0.0.1:8086", "--outbound-port=5140",
        "--outbound-bind-address=0.0.0.0", "--admin-port=5191", "--admin-bind-address=0.0.0.0",
        "--failfast-timeout=1500ms", "--ewma-default-rtt=5ms", "--ewma-decay=1m", "--ewma-failure-penalty=2s",
        "--balancer=round-robin", "--failure-accrual=consecutive", "--failure-accrual-consecutive-max-failures=3",
        "--failure-accrual-consecutive-min-penalty=500ms", "--failure-accrual-consecutive-max-penalty=10s",
        "--failure-accrual-consecutive-jitter-ratio=0.25", "--connect-timeout=2s", "--connect-backoff-min=50ms",
        "--connect-backoff-max=5s", "--connect-backoff-jitter=0.2", "--destination-ca=/etc/ca.pem",
        "--destination-cert=/etc/c.pem", "--destination-key=/etc/k.pem", "--destination-server-name=cp.example",
        "--io-threads=1");
    assertThat(c).isEqualTo(new SidecarConfig("10.0.0.1:8086",
        new ControlPlaneTls(Path.of("/etc/ca.pem"), Path.of("/etc/c.pem"), Path.of("/etc/k.pem"), "cp.example"),
        "0.0.0.0", 5140, "0.0.0.0", 5191, Duration.ofMillis(1500), Duration.ofMillis(5), Duration.ofMinutes(1),
        Duration.ofSeconds(2), SidecarConfig.BalancerKind.ROUND_ROBIN,
        new FailureAccrual.Settings(3, Duration.ofMillis(500), Duration.ofSeconds(10), 0.25),
        Duration.ofSeconds(2), new BackoffPolicy(Duration.ofMillis(50), Duration.ofSeconds(5), 2.0, 0.2), 1));
  }

  @Test
  void linkerdProxyVariablesAreDefaultsForTheFlags() {
    SidecarConfig c = parse(LINKERD_ENV);
    assertThat(c.destinationAddr()).isEqualTo("linkerd-dst-headless.linkerd.svc.cluster.local.:8086");
    assertThat(c.outboundBindAddress()).isEqualTo("127.0.0.3");
    assertThat(c.outboundPort()).isEqualTo(5140);
    assertThat(c.adminBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.adminPort()).isEqualTo(5191);
    assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.reconnectBackoff()).isEqualTo(new BackoffPolicy(Duration.ofMillis(50), Duration.ofMinutes(1), 2.0, 0.2));
    assertThat(c.failfastTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.destinationTls()).as("plaintext without --destination-ca").isNull();

    // With TLS on, Linkerd's destination name is the name the control plane's certificate must carry.
    assertThat(parse(LINKERD_ENV, "--destination-ca=/ca.pem").destinationTls()).isEqualTo(new ControlPlaneTls(
        Path.of("/ca.pem"), null, null, "linkerd-destination.linkerd.serviceaccount.identity.linkerd.cluster.local"));
  }

  @Test
  void flagsWinOverLinkerdProxyVariables() {
    SidecarConfig c = parse(LINKERD_ENV, "--destination-addr=cp:1", "--outbound-port=6140", "--admin-bind-address=127.0.0.2",
        "--connect-timeout=3s", "--connect-backoff-jitter=0", "--failfast-timeout=5s",
        "--destination-ca=/ca.pem", "--destination-server-name=cp.example");
    assertThat(c.destinationAddr()).isEqualTo("cp:1");
    assertThat(c.outboundBindAddress()).as("one flag of the pair replaces the variable").isEqualTo("127.0.0.1");
    assertThat(c.outboundPort()).isEqualTo(6140);
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.2");
    assertThat(c.adminPort()).isEqualTo(4191);
    assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.reconnectBackoff()).isEqualTo(new BackoffPolicy(Duration.ofMillis(50), Duration.ofMinutes(1), 2.0, 0));
    assertThat(c.failfastTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.destinationTls().serverName()).isEqualTo("cp.example");
  }

  @Test
  void outboundListenAddrsWinsAndTakesItsFirstAddress() {
    SidecarConfig c = parse(Map.of("LINKERD2_PROXY_DESTINATION_SVC_ADDR", "cp:8086",
        "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR", "127.0.0.1:4140",
        "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS", "127.0.0.1:7140,[::1]:7140"));
    assertThat(c.outboundPort()).isEqualTo(7140);
    assertThat(parse(Map.of("LINKERD2_PROXY_DESTINATION_SVC_ADDR", "cp:8086",
        "LINKERD2_PROXY_ADMIN_LISTEN_ADDR", "[::1]:4191")).adminBindAddress()).isEqualTo("::1");
  }

  @Test
  void malformedLinkerdProxyVariablesAreClearErrors() {
    assertThatThrownBy(() -> parse(Map.of("LINKERD2_PROXY_DESTINATION_SVC_ADDR", "cp:8086",
        "LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT", "5")))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT=5 (expected: an integer with ms, s, m, h or d");
    assertThatThrownBy(() -> parse(Map.of("LINKERD2_PROXY_DESTINATION_SVC_ADDR", "cp:8086",
        "LINKERD2_PROXY_ADMIN_LISTEN_ADDR", "localhost")))
        .hasMessageContaining("LINKERD2_PROXY_ADMIN_LISTEN_ADDR: 'localhost' (expected: [HOST]:PORT");
    assertThatThrownBy(() -> command(Map.of("LINKERD2_PROXY_LOG_FORMAT", "xml")).logDefaults())
        .hasMessage("LINKERD2_PROXY_LOG_FORMAT=xml (expected: PLAIN or JSON)");
    assertThatThrownBy(() -> command(Map.of("LINKERD2_PROXY_LOG", "warn,linkerd=loud")).logDefaults())
        .hasMessageContaining("'loud' (expected: trace, debug, info, warn, error or off)");
    assertThatThrownBy(() -> parse(Map.of()))
        .hasMessageContaining("--destination-addr' (or LINKERD2_PROXY_DESTINATION_SVC_ADDR)");
  }

  @Test
  void linkerdLogVariablesSetTheLevelsAndFormatWhenNoFlagDoes() {
    LogDefaults d = command(LINKERD_ENV).logDefaults();
    assertThat(d).isEqualTo(new LogDefaults(LoggingOptions.LogLevel.WARN,
        Map.of("dev.portage", LoggingOptions.LogLevel.INFO), LoggingOptions.Format.plain));
    assertThat(command(Map.of("LINKERD2_PROXY_LOG_FORMAT", "JSON")).logDefaults().format())
        .isEqualTo(LoggingOptions.Format.json);

    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger own = (Logger) LoggerFactory.getLogger("dev.portage");
    LoggingOptions logging = new LoggingOptions();
    try {
      logging.apply(LogSettings.NONE, d);
      assertThat(root.getLevel()).isEqualTo(Level.WARN);
      assertThat(own.getLevel()).isEqualTo(Level.INFO);
      logging.level = LoggingOptions.LogLevel.DEBUG; // --log-level wins over the variables
      logging.apply(LogSettings.NONE, d);
      assertThat(root.getLevel()).isEqualTo(Level.DEBUG);
      assertThat(own.getLevel()).isNull();
    } finally {
      new LoggingOptions().apply(LogSettings.NONE);
    }
    assertThat(root.getLevel()).isEqualTo(Level.INFO);
    assertThat(own.getLevel()).isNull();
  }

  @Test
  void linkerdProxyVariablesWithoutEffectLogOneWarnEach() {
    Logger logger = (Logger) LoggerFactory.getLogger(SidecarCommand.class);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    logger.addAppender(captured);
    try {
      SidecarCommand command = command(LINKERD_ENV);
      command.warnWithoutEffect(command.toConfig());
    } finally {
      logger.detachAppender(captured);
    }
    assertThat(captured.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
        "environment variable LINKERD2_PROXY_IDENTITY_DIR is accepted for compatibility with linkerd2-proxy and has no effect in Portage",
        "environment variable LINKERD2_PROXY_INBOUND_LISTEN_ADDR is accepted for compatibility with linkerd2-proxy and has no effect in Portage",
        "environment variable LINKERD2_PROXY_DESTINATION_SVC_NAME has no effect without --destination-ca: the control plane connection is plaintext");
    assertThat(captured.list).allMatch(e -> e.getLevel() == Level.WARN);
  }

  @Test
  void isRegisteredUnderPortage() {
    assertThat(PortageCommand.commandLine().getSubcommands()).containsKey("sidecar");
  }

  @Test
  void badValuesAreRejectedWithTheExpectation() {
    assertThat(run("sidecar", "--destination-addr=c:1", "--balancer=least-loaded").err())
        .contains("balancer: least-loaded (expected: p2c-ewma or round-robin)");
    assertThat(run("sidecar", "--destination-addr=c:1", "--io-threads=-1").err())
        .contains("ioThreads: -1 (expected: >= 0, 0 = one per core)");
    assertThat(run("sidecar", "--destination-addr=nohost").err())
        .contains("destinationAddr: \"nohost\" (expected: HOST:PORT)");
    assertThat(run("sidecar", "--destination-addr=c:1", "--failfast-timeout=0").err())
        .contains("failfastTimeout: PT0S (expected: > 0)");
    assertThat(run("sidecar", "--destination-addr=c:1", "--failure-accrual=windowed").err())
        .contains("--failure-accrual: windowed (expected: none or consecutive)");
    assertThat(run("sidecar", "--destination-addr=c:1", "--failure-accrual=consecutive",
        "--failure-accrual-consecutive-max-failures=0").err())
        .contains("maxFailures: 0 (expected: >= 1)");
    assertThat(run("sidecar", "--destination-addr=c:1", "--destination-cert=/c.pem").err())
        .contains("(expected: both or neither)");
    CliRun missing = run("sidecar");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--destination-addr");
  }
}
