package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.FailureAccrual;
import dev.portage.proxy.mesh.SidecarConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SidecarCommandTest {

  private static SidecarConfig parse(String... args) {
    SidecarCommand command = new SidecarCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  private record Run(int exitCode, String err) {}

  private static Run run(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setErr(new PrintWriter(err));
    return new Run(cl.execute(args), err.toString());
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
    Run missing = run("sidecar");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--destination-addr");
  }
}
