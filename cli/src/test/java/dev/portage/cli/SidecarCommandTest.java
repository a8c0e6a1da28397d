package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.proxy.mesh.SidecarConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
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
  }

  @Test
  void everyFlagIsMapped() {
    SidecarConfig c = parse("--destination-addr=10.0.0.1:8086", "--outbound-port=5140",
        "--outbound-bind-address=0.0.0.0", "--admin-port=5191", "--admin-bind-address=0.0.0.0",
        "--failfast-timeout=1500ms", "--ewma-default-rtt=5ms", "--ewma-decay=1m", "--balancer=round-robin",
        "--io-threads=1");
    assertThat(c).isEqualTo(new SidecarConfig("10.0.0.1:8086", "0.0.0.0", 5140, "0.0.0.0", 5191,
        Duration.ofMillis(1500), Duration.ofMillis(5), Duration.ofMinutes(1), SidecarConfig.BalancerKind.ROUND_ROBIN,
        1));
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
    Run missing = run("sidecar");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--destination-addr");
  }
}
