package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.ProxyStrategy;
import dev.portage.tunnel.server.TunnelServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ServerCommandTest {

  private static TunnelServerConfig parse(String... args) {
    CommandLine cmd = new CommandLine(new ServerCommand());
    cmd.parseArgs(args);
    return ((ServerCommand) cmd.getCommand()).toConfig();
  }

  @Test
  void defaultsMatchUpstream() {
    TunnelServerConfig c = parse();
    assertThat(c.mode()).isEqualTo(FrontendMode.GRPC);
    assertThat(c.serverPort()).isEqualTo(8090);
    assertThat(c.agentPort()).isEqualTo(8091);
    assertThat(c.healthPort()).isEqualTo(8092);
    assertThat(c.adminPort()).isEqualTo(8095);
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.deleteExistingUdsFile()).isTrue();
    assertThat(c.keepaliveTime()).isEqualTo(Duration.ofHours(1));
    assertThat(c.frontendKeepaliveTime()).isEqualTo(Duration.ofHours(1));
    assertThat(c.serverCount()).isEqualTo(1);
    assertThat(c.proxyStrategies()).containsExactly(ProxyStrategy.DEFAULT);
    assertThat(c.xfrChannelSize()).isEqualTo(10);
    assertThat(c.enableLeaseController()).isFalse();
    assertThat(c.leaseNamespace()).isEqualTo("kube-system");
    assertThat(c.leaseLabels()).isEqualTo(Map.of("k8s-app", "konnectivity-server"));
    assertThat(c.gracefulShutdownTimeout()).isZero();
    assertThat(c.backendDialTimeout()).isZero();
    assertThat(c.serverId()).isNotBlank();
  }

  @Test
  void everyUpstreamServerFlagIsAccepted() {
    TunnelServerConfig c = parse(
        "--mode", "http-connect", "--uds-name", "/tmp/k.sock", "--delete-existing-uds-file=false",
        "--server-port", "0", "--server-bind-address", "127.0.0.1",
        "--agent-port", "9091", "--agent-bind-address", "10.0.0.1",
        "--cluster-cert", "/c.crt", "--cluster-key", "/c.key",
        "--health-port", "9092", "--health-bind-address", "0.0.0.0",
        "--admin-port", "9095", "--admin-bind-address", "127.0.0.2",
        "--keepalive-time", "30s", "--frontend-keepalive-time", "1m30s",
        "--server-id", "s1", "--server-count", "3",
        "--agent-namespace", "kube-system", "--agent-service-account", "konnectivity-agent",
        "--authentication-audience", "system:konnectivity-server", "--kubeconfig", "/kubeconfig",
        "--proxy-strategies", "destHost,defaultRoute,default", "--xfr-channel-size", "150",
        "--enable-lease-controller", "--lease-namespace", "tunnel", "--lease-label", "app=tunnel,tier=cp",
        "--graceful-shutdown-timeout", "15s", "--backend-dial-timeout", "500ms",
        "--cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "--tls-min-version", "VersionTLS13");
    assertThat(c.mode()).isEqualTo(FrontendMode.HTTP_CONNECT);
    assertThat(c.udsName()).isEqualTo(Path.of("/tmp/k.sock"));
    assertThat(c.deleteExistingUdsFile()).isFalse();
    assertThat(c.agentTls().cert()).isEqualTo(Path.of("/c.crt"));
    assertThat(c.agentTls().clientCa()).isNull();
    assertThat(c.frontendKeepaliveTime()).isEqualTo(Duration.ofSeconds(90));
    assertThat(c.serverId()).isEqualTo("s1");
    assertThat(c.serverCount()).isEqualTo(3);
    assertThat(c.agentTokenAuth().expectedUsername())
        .isEqualTo("system:serviceaccount:kube-system:konnectivity-agent");
    assertThat(c.proxyStrategies())
        .containsExactly(ProxyStrategy.DEST_HOST, ProxyStrategy.DEFAULT_ROUTE, ProxyStrategy.DEFAULT);
    assertThat(c.xfrChannelSize()).isEqualTo(150);
    assertThat(c.enableLeaseController()).isTrue();
    assertThat(c.leaseLabels()).isEqualTo(Map.of("app", "tunnel", "tier", "cp"));
    assertThat(c.backendDialTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.cipherSuites()).hasSize(2);
    assertThat(c.tlsMinVersion()).isEqualTo("VersionTLS13");
  }

  @Test
  void badCombinationsAreErrorsNamingTheFlags() {
    assertThatThrownBy(() -> parse("--uds-name", "/tmp/k.sock"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessage("serverPort: 8090 (expected: 0 when udsName is set)");
    assertThatThrownBy(() -> parse("--agent-namespace", "ns"))
        .hasMessage("--agent-namespace needs --agent-service-account and --authentication-audience");
    assertThatThrownBy(() -> parse("--agent-namespace", "ns", "--agent-service-account", "sa",
        "--authentication-audience", "aud", "--cluster-cert", "c", "--cluster-key", "k", "--cluster-ca-cert", "ca"))
        .hasMessage("--agent-namespace and --cluster-ca-cert are exclusive");
    assertThatThrownBy(() -> parse("--server-cert", "c")).hasMessage("--server-cert and --server-key go together (expected: both or neither)");
    assertThatThrownBy(() -> parse("--proxy-strategies", "nearest"))
        .hasMessage("proxy strategy: \"nearest\" (expected: default, destHost or defaultRoute)");
    assertThatThrownBy(() -> parse("--mode", "socks")).hasMessage("mode: \"socks\" (expected: grpc or http-connect)");
  }

  @Test
  void unknownFlagExitsNonZeroWithAMessage() {
    StringWriter err = new StringWriter();
    CommandLine cmd = new CommandLine(new PortageCommand());
    cmd.setErr(new PrintWriter(err));
    int code = cmd.execute("server", "--no-such-flag");
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains("Unknown option: '--no-such-flag'");
    assertThat(List.of(cmd.getSubcommands().keySet().toArray())).contains("server");
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
  void keyExchangeGroupsAcceptGoOpenSslAndIanaNames() {
    assertThat(parse().keyExchangeGroups()).isEmpty();
    assertThat(parse("--tls-key-exchange-groups", "X25519MLKEM768,X25519,CurveP256").keyExchangeGroups())
        .containsExactly("X25519MLKEM768", "x25519", "secp256r1");
    assertThat(parse("--tls-key-exchange-groups=x25519,prime256v1,P-384,secp521r1").keyExchangeGroups())
        .containsExactly("x25519", "secp256r1", "secp384r1", "secp521r1");
  }

  @Test
  void unknownKeyExchangeGroupExitsWithUsageErrorNamingTheFlag() {
    CliRun run = CliRun.of("server", "--tls-key-exchange-groups=x25519,ffdhe2048");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .contains("--tls-key-exchange-groups: unknown key-exchange group \"ffdhe2048\" (expected: X25519MLKEM768,"
            + " X25519, CurveP256, secp256r1, prime256v1, P-256, CurveP384, secp384r1, P-384, CurveP521,"
            + " secp521r1, P-521)");
  }
}
