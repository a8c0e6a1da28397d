package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.portage.cli.flags.FlagForms;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.control.destination.DestinationConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

class ControlPlaneCommandTest {

  private static ControlPlaneConfig parse(String... args) {
    ControlPlaneCommand command = new ControlPlaneCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  private static CliRun run(String... args) {
    String[] full = new String[args.length + 1];
    full[0] = "control-plane";
    System.arraycopy(args, 0, full, 1, args.length);
    return CliRun.of(full);
  }

  @Test
  void defaultsFollowTheSpec() {
    ControlPlaneConfig c = parse();
    assertThat(c.source()).isEqualTo(ControlPlaneConfig.SourceType.FILES);
    assertThat(c.dir()).isNull();
    assertThat(c.kubeconfig()).isNull();
    assertThat(c.grpcBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.grpcPort()).isEqualTo(8086);
    assertThat(c.tls()).isFalse();
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminPort()).isEqualTo(9996);
    assertThat(c.debounceAfter()).isEqualTo(Duration.ofMillis(100));
    assertThat(c.debounceMax()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.ackTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.requireAuth()).isFalse();
  }

  @Test
  void everyFlagIsAccepted() {
    ControlPlaneConfig c = parse(
        "--source=kubernetes", "--kubeconfig=/root/.kube/config", "--grpc-bind-address=127.0.0.1",
        "--grpc-port=8090", "--tls-cert=/etc/tls.crt", "--tls-key=/etc/tls.key", "--client-ca=/etc/ca.crt",
        "--admin-bind-address=0.0.0.0", "--admin-port=9990", "--debounce-after=50ms", "--debounce-max=2s",
        "--ack-timeout=1m30s", "--require-auth");
    assertThat(c.source()).isEqualTo(ControlPlaneConfig.SourceType.KUBERNETES);
    assertThat(c.kubeconfig()).isEqualTo(Path.of("/root/.kube/config"));
    assertThat(c.grpcBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.grpcPort()).isEqualTo(8090);
    assertThat(c.tlsCert()).isEqualTo(Path.of("/etc/tls.crt"));
    assertThat(c.tlsKey()).isEqualTo(Path.of("/etc/tls.key"));
    assertThat(c.clientCa()).isEqualTo(Path.of("/etc/ca.crt"));
    assertThat(c.adminBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.adminPort()).isEqualTo(9990);
    assertThat(c.debounceAfter()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.debounceMax()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.ackTimeout()).isEqualTo(Duration.ofSeconds(90));
    assertThat(c.requireAuth()).isTrue();
    assertThat(c.ruleServerConfig().ackTimeout()).isEqualTo(Duration.ofSeconds(90));

    assertThat(parse("--source", "FILES", "--dir", "/srv/rules").dir()).isEqualTo(Path.of("/srv/rules"));
  }

  @Test
  void badValuesExitWithTwoAndSayWhatWasExpected() {
    assertBad("'etcd' (expected: files or kubernetes)", "--source", "etcd");
    assertBad("'etcd' (expected: files or kubernetes)", "--source=etcd");
    assertBad("'100' is not a duration (expected: Go syntax such as 0, 500ms, 30s, 1m30s, 1h)", "--debounce-after=100");
    assertBad("'1x' is not a duration", "--ack-timeout=1x");
    assertBad("ackTimeout: PT0S (expected: > 0)", "--ack-timeout=0");
    assertBad("debounceMax: PT0.05S (expected: >= debounceAfter PT0.1S)", "--debounce-max=50ms");
    assertBad("grpcPort: 70000 (expected: 0..65535)", "--grpc-port=70000");
    assertBad("Invalid value for option '--admin-port'", "--admin-port=http");
    assertBad("--tls-cert and --tls-key go together", "--tls-cert=/etc/tls.crt");
    assertBad("--client-ca needs --tls-cert and --tls-key", "--client-ca=/etc/ca.crt");
    assertBad("--dir is only for --source files", "--source=kubernetes", "--dir=/srv");
    assertBad("--kubeconfig is only for --source kubernetes", "--source=files", "--kubeconfig=/root/.kube/config");
    assertBad("--addr: 'localhost' (expected: [HOST]:PORT", "-addr=localhost");
    assertBad("--metrics-addr: ':99999' (expected: [HOST]:PORT", "-metrics-addr=:99999");
    assertBad("streamQueueLimit: 0 (expected: > 0)", "-stream-queue-capacity=0");
    assertBad("'loud' (expected: TRACE, DEBUG", "-log-level=loud");
    assertBad("Unknown option: '--grpc-prot=1'", "--grpc-prot=1");
  }

  private static void assertBad(String message, String... args) {
    CliRun r = run(args);
    assertThat(r.exitCode()).as("exit code of %s", String.join(" ", args)).isEqualTo(2);
    assertThat(r.err()).as("stderr of %s", String.join(" ", args)).contains(message);
  }

  /**
   * The Linkerd destination controller's flags as its manifests pass them (Go's single-dash form),
   * every row of its flag table: the implemented ones take effect, the others log one WARN each.
   */
  @Test
  void linkerdDestinationControllerFlagsInGoFormTakeEffectOrWarnOnce() {
    String[] linkerd = {
        "-addr=:8087", "-metrics-addr=127.0.0.1:9997", "-kubeconfig=/etc/kubeconfig",
        "-controller-namespace=linkerd", "-outbound-transport-mode=transparent",
        "-enable-h2-upgrade=true", "-enable-endpoint-slices=true", "-enable-ipv6=false",
        "-identity-trust-domain=cluster.local", "-cluster-domain=example.org", "-default-opaque-ports=25,587,3306",
        "-enable-pprof=false", "-export-queue-metrics", "-stream-queue-capacity=200",
        "-ext-endpoint-zone-weights=false", "-meshed-http2-client-params={\"keepAlive\":{}}", "-trace-collector",
        "collector.linkerd-jaeger:55678", "-log-level=warn", "-log-format=plain"};
    CommandLine cl = new CommandLine(new PortageCommand());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    FlagForms forms = FlagForms.install(cl);
    String[] args = new String[linkerd.length + 1];
    args[0] = "control-plane";
    System.arraycopy(linkerd, 0, args, 1, linkerd.length);
    CommandLine.ParseResult parsed = cl.parseArgs(args);

    ControlPlaneConfig c = ((ControlPlaneCommand) parsed.subcommand().commandSpec().userObject()).toConfig();
    assertThat(c.grpcBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.grpcPort()).isEqualTo(8087);
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminPort()).isEqualTo(9997);
    assertThat(c.source()).as("-kubeconfig selects the Kubernetes source").isEqualTo(ControlPlaneConfig.SourceType.KUBERNETES);
    assertThat(c.kubeconfig()).isEqualTo(Path.of("/etc/kubeconfig"));
    assertThat(c.destination()).isEqualTo(new DestinationConfig("example.org", 200, DestinationConfig.DEFAULT_ENDPOINT_WEIGHT));
    PortageCommand top = (PortageCommand) parsed.commandSpec().userObject();
    assertThat(top.logging.level).isEqualTo(LoggingOptions.LogLevel.WARN);
    assertThat(top.logging.format).isEqualTo(LoggingOptions.Format.plain);

    Logger logger = (Logger) LoggerFactory.getLogger(FlagForms.class);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    logger.addAppender(captured);
    try {
      forms.warnWithoutEffect(parsed);
    } finally {
      logger.detachAppender(captured);
    }
    assertThat(captured.list).extracting(ILoggingEvent::getFormattedMessage).containsExactlyInAnyOrder(
        Stream.of("controller-namespace", "outbound-transport-mode", "enable-h2-upgrade", "enable-endpoint-slices",
                "enable-ipv6", "identity-trust-domain", "default-opaque-ports", "enable-pprof", "export-queue-metrics",
                "ext-endpoint-zone-weights", "meshed-http2-client-params", "trace-collector")
            .map(f -> "flag --" + f + " is accepted for compatibility with the Linkerd destination controller and has no effect in Portage")
            .toArray(String[]::new));
  }

  @Test
  void linkerdDefaultsAndLevelNamesAreAccepted() {
    ControlPlaneConfig c = parse("--cluster-domain=", "--kubeconfig=");
    assertThat(c.destination()).isEqualTo(DestinationConfig.defaults());
    assertThat(c.source()).isEqualTo(ControlPlaneConfig.SourceType.FILES);
    for (String level : new String[] {"panic", "fatal", "error", "warning", "info", "debug", "trace", "INFO"}) {
      assertThat(run("-log-level=" + level, "--help").exitCode()).as(level).isZero();
    }
    CliRun version = run("-version");
    assertThat(version.exitCode()).isZero();
    assertThat(version.out()).startsWith("portage ");
  }

  @Test
  void missingDirectoryFailsAtStartWithItsName() {
    CliRun r = run("--dir=/nonexistent/portage-rules", "--grpc-port=0", "--admin-port=0", "--grpc-bind-address=127.0.0.1");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err()).contains("/nonexistent/portage-rules").contains("expected: an existing directory");
  }

  @Test
  void listedInTheTopLevelHelp() {
    CliRun help = CliRun.of("--help");
    assertThat(help.exitCode()).isZero();
    assertThat(help.out()).contains("control-plane");
  }
}
