package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.tunnel.agent.TunnelAgentConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class AgentCommandTest {

  private static TunnelAgentConfig parse(String... args) {
    AgentCommand command = new AgentCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  @Test
  void defaultsMatchUpstream() {
    TunnelAgentConfig c = parse();
    assertThat(c.proxyServerHost()).isEqualTo("127.0.0.1");
    assertThat(c.proxyServerPort()).isEqualTo(8091);
    assertThat(c.healthServerPort()).isEqualTo(8093);
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminServerPort()).isEqualTo(8094);
    assertThat(c.syncInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.probeInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.syncIntervalCap()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.keepaliveTime()).isEqualTo(Duration.ofHours(1));
    assertThat(c.xfrChannelSize()).isEqualTo(150);
    assertThat(c.syncForever()).isFalse();
    assertThat(c.countServerLeases()).isFalse();
    assertThat(c.leaseNamespace()).isEqualTo("kube-system");
    assertThat(c.serverCountSource()).isEqualTo(TunnelAgentConfig.ServerCountSource.DEFAULT);
    assertThat(c.agentId()).isNotEmpty();
    assertThat(c.tls()).isFalse();
  }

  @Test
  void everyAgentFlagIsAccepted() {
    TunnelAgentConfig c = parse(
        "--agent-cert=/etc/a.crt", "--agent-key=/etc/a.key", "--ca-cert=/etc/ca.crt",
        "--proxy-server-host=konnectivity", "--proxy-server-port=8132", "--alpn-proto=konnectivity,h2",
        "--health-server-host=0.0.0.0", "--health-server-port=8134", "--admin-bind-address=127.0.0.2",
        "--admin-server-port=8133", "--agent-id=node-1", "--agent-identifiers=host=node-1&ipv4=10.0.0.7",
        "--sync-interval=2s", "--probe-interval=500ms", "--sync-interval-cap=1m30s", "--keepalive-time=30s",
        "--service-account-token-path=/var/run/token", "--sync-forever", "--xfr-channel-size=10",
        "--count-server-leases=true", "--lease-namespace=ns", "--lease-label-selector=app=x",
        "--server-count-source=max", "--kubeconfig=/root/.kube/config", "--logtostderr=true");
    assertThat(c.agentCert()).isEqualTo(Path.of("/etc/a.crt"));
    assertThat(c.tls()).isTrue();
    assertThat(c.proxyServerHost()).isEqualTo("konnectivity");
    assertThat(c.proxyServerPort()).isEqualTo(8132);
    assertThat(c.alpnProtos()).isEqualTo(List.of("konnectivity", "h2"));
    assertThat(c.healthServerPort()).isEqualTo(8134);
    assertThat(c.agentId()).isEqualTo("node-1");
    assertThat(c.agentIdentifiers()).isEqualTo("host=node-1&ipv4=10.0.0.7");
    assertThat(c.syncInterval()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.probeInterval()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.syncIntervalCap()).isEqualTo(Duration.ofSeconds(90));
    assertThat(c.keepaliveTime()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.syncForever()).isTrue();
    assertThat(c.xfrChannelSize()).isEqualTo(10);
    assertThat(c.countServerLeases()).isTrue();
    assertThat(c.serverCountSource()).isEqualTo(TunnelAgentConfig.ServerCountSource.MAX);
  }

  @Test
  void profilingFlagsTakeEffect() {
    TunnelAgentConfig c = parse("--enable-profiling", "--enable-contention-profiling=true");
    assertThat(c.enableProfiling()).isTrue();
    assertThat(c.enableContentionProfiling()).isTrue();
    assertThat(parse().enableProfiling()).isFalse();
  }

  @Test
  void badValuesAreRejectedWithTheExpectation() {
    CliRun badDuration = CliRun.of("agent", "--sync-interval=fast");
    assertThat(badDuration.exitCode()).isNotZero();
    assertThat(badDuration.err()).contains("'fast' is not a duration");

    CliRun badSource = CliRun.of("agent", "--server-count-source=min");
    assertThat(badSource.exitCode()).isNotZero();
    assertThat(badSource.err()).contains("server-count-source: min (expected: default or max)");

    CliRun badSize = CliRun.of("agent", "--xfr-channel-size=0");
    assertThat(badSize.exitCode()).isNotZero();
    assertThat(badSize.err()).contains("xfrChannelSize: 0 (expected: > 0)");
  }

  @Test
  void flowControlIsOnWithAOneMebibyteWindowAndCanBeTurnedOff() {
    assertThat(parse().flowControl()).isTrue();
    assertThat(parse().flowControlWindow()).isEqualTo(4L << 20);
    assertThat(parse("--flow-control-window", "65536").flowControlWindow()).isEqualTo(65_536);
    assertThat(parse("--flow-control=false").flowControl()).isFalse();
    assertThat(parse("--flow-control-window", "0").flowControl()).isFalse();
    assertThatThrownBy(() -> parse("--flow-control-window", "-1"))
        .hasMessageContaining("flowControlWindow: -1");
    assertThatThrownBy(() -> parse("--flow-control-window", Long.toString((1L << 30) + 1)))
        .hasMessageContaining("flowControlWindow: 1073741825");
  }

  @Test
  void keyExchangeGroupsChooseTheAgentLinksGroups() {
    assertThat(parse().keyExchangeGroups()).isEmpty();
    assertThat(parse("--tls-key-exchange-groups=curvep384,X25519").keyExchangeGroups())
        .containsExactly("secp384r1", "x25519");

    CliRun bad = CliRun.of("agent", "--tls-key-exchange-groups=x448");
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad.err()).contains("--tls-key-exchange-groups: unknown key-exchange group \"x448\" (expected: ");
  }
}
