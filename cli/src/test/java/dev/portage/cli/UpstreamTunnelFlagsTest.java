package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.portage.cli.flags.FlagForms;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.TunnelServerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * Every flag of Konnectivity v0.34.0's {@code proxy-server} and {@code proxy-agent} (their
 * {@code options.go} tables, klog's flags included) starts {@code portage server} / {@code portage
 * agent}: the ones with an equivalent take effect, the ones without log exactly one WARN, none exits 2.
 */
class UpstreamTunnelFlagsTest {

  /** klog's flags, as Konnectivity's binaries register them (values of the right kind). */
  private static final List<String> KLOG = List.of(
      "-v=4", "--vmodule=server=5", "--logtostderr=true", "--alsologtostderr=false", "--stderrthreshold=2",
      "--log-dir=/var/log", "--log-file-max-size=1800", "--add-dir-header=false", "--skip-headers=false",
      "--skip-log-headers=false", "--one-output=false", "--log-backtrace-at=server.go:42");

  /** proxy-server v0.34.0, every flag; the UDS and the token-auth flags go in a line of their own below. */
  private static final List<String> SERVER = List.of(
      "--mode=http-connect", "--delete-existing-uds-file=true",
      "--server-port=8090", "--server-bind-address=0.0.0.0",
      "--server-cert=/pki/server.crt", "--server-key=/pki/server.key", "--server-ca-cert=/pki/ca.crt",
      "--agent-port=8091", "--agent-bind-address=0.0.0.0",
      "--cluster-cert=/pki/cluster.crt", "--cluster-key=/pki/cluster.key", "--cluster-ca-cert=/pki/ca.crt",
      "--health-port=8092", "--health-bind-address=0.0.0.0", "--admin-port=8095", "--admin-bind-address=127.0.0.1",
      "--keepalive-time=1h", "--frontend-keepalive-time=30m", "--enable-profiling=true",
      "--enable-contention-profiling=true", "--server-id=server-a", "--server-count=3",
      "--kubeconfig=/etc/kubernetes/admin.conf", "--kubeconfig-qps=20", "--kubeconfig-burst=40",
      "--kube-api-content-type=application/json", "--proxy-strategies=destHost,default",
      "--cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
      "--xfr-channel-size=20", "--enable-lease-controller=true", "--lease-namespace=kube-system",
      "--lease-label=k8s-app=konnectivity-server", "--warn-on-channel-limit=true");

  private static final List<String> SERVER_UDS_AND_TOKEN_AUTH = List.of(
      "--mode=grpc", "--uds-name=/etc/kubernetes/konnectivity-server/konnectivity-server.socket",
      "--delete-existing-uds-file", "--server-port=0", "--cluster-cert=/pki/cluster.crt",
      "--cluster-key=/pki/cluster.key", "--agent-namespace=kube-system",
      "--agent-service-account=konnectivity-agent", "--authentication-audience=system:konnectivity-server");

  /** proxy-agent v0.34.0, every flag. */
  private static final List<String> AGENT = List.of(
      "--proxy-server-host=konnectivity.example", "--proxy-server-port=8132",
      "--agent-cert=/pki/agent.crt", "--agent-key=/pki/agent.key", "--ca-cert=/pki/ca.crt",
      "--alpn-proto=konnectivity", "--health-server-host=0.0.0.0", "--health-server-port=8134",
      "--admin-bind-address=127.0.0.1", "--admin-server-port=8133", "--enable-profiling",
      "--enable-contention-profiling", "--agent-id=node-1",
      "--agent-identifiers=host=node-1&ipv4=10.0.0.7&ipv6=fd00::7&cidr=10.0.0.0/24&default-route=true",
      "--sync-interval=5s", "--sync-interval-cap=30s", "--probe-interval=5s", "--keepalive-time=1h",
      "--service-account-token-path=/var/run/secrets/tokens/konnectivity-agent-token", "--sync-forever=false",
      "--xfr-channel-size=150", "--count-server-leases=true", "--lease-namespace=kube-system",
      "--lease-label=k8s-app=konnectivity-server", "--server-count-source=max", "--kubeconfig=/root/.kube/config",
      "--kube-api-content-type=application/vnd.kubernetes.protobuf", "--warn-on-channel-limit");

  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger flagLog = (Logger) LoggerFactory.getLogger(FlagForms.class);

  @BeforeEach
  void captureWarnings() {
    logs.start();
    flagLog.addAppender(logs);
  }

  @AfterEach
  void stopCapturing() {
    flagLog.detachAppender(logs);
  }

  /** Parses {@code args} as the {@code portage} binary does and returns the subcommand's object. */
  private <T> T parse(Class<T> type, List<String> args) {
    CommandLine cl = new CommandLine(new PortageCommand());
    FlagForms forms = FlagForms.install(cl);
    ParseResult result = cl.parseArgs(args.toArray(String[]::new));
    forms.warnWithoutEffect(result);
    return type.cast(result.subcommand().commandSpec().userObject());
  }

  private static List<String> join(String command, List<String> first, List<String> second) {
    List<String> all = new ArrayList<>(List.of(command));
    all.addAll(first);
    all.addAll(second);
    return all;
  }

  private List<String> warnings() {
    return logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Test
  void everyProxyServerFlagStartsTheServerAndTheImplementedOnesTakeEffect() {
    ServerCommand server = parse(ServerCommand.class, join("server", SERVER, KLOG));
    TunnelServerConfig c = server.toConfig();
    assertThat(c.serverId()).isEqualTo("server-a");
    assertThat(c.serverCount()).isEqualTo(3);
    assertThat(c.frontendKeepaliveTime()).isEqualTo(Duration.ofMinutes(30));
    assertThat(c.enableProfiling()).isTrue();
    assertThat(c.enableContentionProfiling()).isTrue();
    assertThat(c.cipherSuites()).containsExactly(
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384");
    assertThat(c.leaseLabels()).isEqualTo(Map.of("k8s-app", "konnectivity-server"));
    assertThat(server.kubeconfigQps).isEqualTo(20f);
    assertThat(server.kubeconfigBurst).isEqualTo(40);
    assertThat(server.kubeApiContentType).isEqualTo("application/json");

    TunnelServerConfig uds = parse(ServerCommand.class, join("server", SERVER_UDS_AND_TOKEN_AUTH, List.of()))
        .toConfig();
    assertThat(uds.udsName()).hasToString("/etc/kubernetes/konnectivity-server/konnectivity-server.socket");
    assertThat(uds.agentTokenAuth().expectedUsername()).isEqualTo("system:serviceaccount:kube-system:konnectivity-agent");

    // One WARN per flag without effect, and nothing else.
    assertThat(warnings()).containsExactlyInAnyOrder(
        "flag --warn-on-channel-limit is accepted for compatibility with proxy-server and has no effect in Portage",
        "flag --vmodule is accepted for compatibility with klog and has no effect in Portage",
        "flag --log-dir is accepted for compatibility with klog and has no effect in Portage",
        "flag --add-dir-header is accepted for compatibility with klog and has no effect in Portage",
        "flag --skip-headers is accepted for compatibility with klog and has no effect in Portage",
        "flag --skip-log-headers is accepted for compatibility with klog and has no effect in Portage",
        "flag --one-output is accepted for compatibility with klog and has no effect in Portage",
        "flag --log-backtrace-at is accepted for compatibility with klog and has no effect in Portage");
  }

  @Test
  void everyProxyAgentFlagStartsTheAgentAndTheImplementedOnesTakeEffect() {
    TunnelAgentConfig c = parse(AgentCommand.class, join("agent", AGENT, KLOG)).toConfig();
    assertThat(c.proxyServerHost()).isEqualTo("konnectivity.example");
    assertThat(c.leaseLabelSelector()).isEqualTo("k8s-app=konnectivity-server");
    assertThat(c.enableProfiling()).isTrue();
    assertThat(c.enableContentionProfiling()).isTrue();
    assertThat(c.kubeApiContentType()).isEqualTo("application/vnd.kubernetes.protobuf");
    assertThat(c.syncInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.serverCountSource()).isEqualTo(TunnelAgentConfig.ServerCountSource.MAX);
    assertThat(warnings()).contains(
        "flag --warn-on-channel-limit is accepted for compatibility with proxy-agent and has no effect in Portage");
    assertThat(warnings()).hasSize(8);
  }

  @Test
  void pflagFormsWorkOnTunnelFlags() {
    TunnelServerConfig c = parse(ServerCommand.class,
        List.of("server", "--server-port", "9001", "--server-port=9002", "--server-count", "2", "--enable-lease-controller",
            "--lease-label", "a=b", "--lease-label=k8s-app=konnectivity-server")).toConfig();
    assertThat(c.serverPort()).isEqualTo(9002); // a repeated flag takes the last value
    assertThat(c.serverCount()).isEqualTo(2);
    assertThat(c.enableLeaseController()).isTrue();
    assertThat(c.leaseLabels()).isEqualTo(Map.of("k8s-app", "konnectivity-server"));

    TunnelAgentConfig a = parse(AgentCommand.class, List.of("agent", "--lease-label-selector=a=b",
        "--sync-forever", "--count-server-leases=1")).toConfig();
    assertThat(a.leaseLabelSelector()).isEqualTo("a=b"); // Portage's older name still works
    assertThat(a.syncForever()).isTrue();
    assertThat(a.countServerLeases()).isTrue();
  }

  @Test
  void unknownAndInsecureCipherSuitesAreRefusedAsUpstreamRefusesThem() {
    for (String suite : List.of("TLS_RSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "TLS_NO_SUCH_SUITE")) {
      CliRun r = CliRun.of("server", "--cipher-suites=TLS_AES_128_GCM_SHA256," + suite);
      assertThat(r.exitCode()).as(suite).isEqualTo(2);
      assertThat(r.err()).contains("cipher suite " + suite + " not supported, doesn't exist or considered as insecure");
    }
  }

  @Test
  void unknownAgentIdentifierKeysAreRefused() {
    CliRun r = CliRun.of("agent", "--agent-identifiers=host=node-1&zone=eu-west-1a");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err()).contains("unknown address type: zone");
  }

  @Test
  void contentionProfilingNeedsProfiling() {
    for (String command : List.of("server", "agent")) {
      CliRun r = CliRun.of(command, "--enable-contention-profiling");
      assertThat(r.exitCode()).as(command).isEqualTo(2);
      assertThat(r.err()).contains("if --enable-contention-profiling is set, --enable-profiling must also be set");
    }
  }
}
