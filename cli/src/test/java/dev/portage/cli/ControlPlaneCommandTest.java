package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.control.ControlPlaneConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ControlPlaneCommandTest {

  private static ControlPlaneConfig parse(String... args) {
    ControlPlaneCommand command = new ControlPlaneCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  private record Run(int exitCode, String err) {}

  private static Run run(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setErr(new PrintWriter(err));
    String[] full = new String[args.length + 1];
    full[0] = "control-plane";
    System.arraycopy(args, 0, full, 1, args.length);
    return new Run(cl.execute(full), err.toString());
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
    assertBad("--kubeconfig is only for --source kubernetes", "--kubeconfig=/root/.kube/config");
    assertBad("Unknown option: '--grpc-prot=1'", "--grpc-prot=1");
  }

  private static void assertBad(String message, String... args) {
    Run r = run(args);
    assertThat(r.exitCode()).as("exit code of %s", String.join(" ", args)).isEqualTo(2);
    assertThat(r.err()).as("stderr of %s", String.join(" ", args)).contains(message);
  }

  @Test
  void missingDirectoryFailsAtStartWithItsName() {
    Run r = run("--dir=/nonexistent/portage-rules", "--grpc-port=0", "--admin-port=0", "--grpc-bind-address=127.0.0.1");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err()).contains("/nonexistent/portage-rules").contains("expected: an existing directory");
  }

  @Test
  void listedInTheTopLevelHelp() {
    StringWriter out = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setOut(new PrintWriter(out));
    assertThat(cl.execute("--help")).isZero();
    assertThat(out.toString()).contains("control-plane");
  }
}
