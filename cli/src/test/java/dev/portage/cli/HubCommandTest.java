package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.portage.cli.flags.FlagForms;
import dev.portage.hub.EdgeHubConfig;
import dev.portage.hub.WorkingMode;
import dev.portage.hub.bootstrap.NodeBootstrap;
import dev.portage.hub.remote.Upstreams;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

class HubCommandTest {

  /** The command line as {@code portage} parses it (pflag forms, upstream flags), without running. */
  private static EdgeHubConfig parse(String... args) {
    CommandLine cl = PortageCommand.commandLine();
    cl.parseArgs(Stream.concat(Stream.of("hub"), Stream.of(args)).toArray(String[]::new));
    return ((HubCommand) cl.getSubcommands().get("hub").getCommand()).toConfig();
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  /** What {@code portage hub <args> --help} logs as WARN lines of the flag layer. */
  private static List<String> warnings(String... args) {
    Logger forms = (Logger) LoggerFactory.getLogger(FlagForms.class);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    forms.addAppender(captured);
    try {
      List<String> all = new ArrayList<>(List.of("hub"));
      all.addAll(List.of(args));
      all.add("--help");
      assertThat(run(all.toArray(String[]::new)).exitCode()).isZero();
    } finally {
      forms.detachAppender(captured);
    }
    return captured.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Test
  void defaultsMatchYurtHub() {
    EdgeHubConfig c = parse("--server-addr=https://10.0.0.1:6443", "--node-name=edge-1");
    assertThat(c.serverAddrs()).containsExactly("https://10.0.0.1:6443");
    assertThat(c.nodeName()).isEqualTo("edge-1");
    assertThat(c.workingMode()).isEqualTo(WorkingMode.EDGE);
    assertThat(c.nodePoolName()).isEmpty();
    assertThat(c.namespace()).isEqualTo("kube-system");
    assertThat(c.profiling()).isTrue();
    assertThat(c.lbMode()).isEqualTo(Upstreams.LbMode.RR);
    assertThat(c.bindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.proxyBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.proxyPort()).isEqualTo(10261);
    assertThat(c.proxySecurePort()).isEqualTo(10268);
    assertThat(c.servePort()).isEqualTo(10267);
    assertThat(c.diskCachePath()).isEqualTo(Path.of("/etc/kubernetes/cache/"));
    assertThat(c.bootstrap()).isEqualTo(new NodeBootstrap(Path.of("/var/lib/yurthub"), null,
        NodeBootstrap.Mode.TOKEN, List.of(), true));
    assertThat(c.heartbeat()).isEqualTo(Upstreams.Heartbeat.defaults());
    assertThat(c.maxRequestsInFlight()).isEqualTo(250);
    assertThat(c.minRequestTimeout()).isEqualTo(Duration.ofSeconds(1800));
    assertThat(c.cacheAgents()).containsExactlyInAnyOrder("kubelet", "kube-proxy", "flanneld", "coredns");
    assertThat(c.caFile()).isNull();
    assertThat(c.tlsCertFile()).isNull();
    assertThat(c.bootstrapToken()).isEmpty();
  }

  @Test
  void everyYurtHubFlagIsAcceptedAndThoseWithAMeaningTakeEffect() {
    String hash = "sha256:" + "0a".repeat(32);
    EdgeHubConfig c = parse(
        // YurtHub v1.7.0's flags (cmd/yurthub/app/options), every one, in pflag's forms.
        "--node-name", "edge-1", "--server-addr=https://a:6443,https://b:6443",
        "--working-mode=edge", "--nodepool-name=hangzhou", "--bind-address=0.0.0.0",
        "--serve-port=3", "--bind-proxy-address", "169.254.2.1", "--proxy-port=1",
        "--proxy-secure-port=2", "--multiplexer-port=10269", "--namespace=openyurt-system",
        "--node-ip=192.168.1.10", "--lb-mode=priority", "--heartbeat-failed-retry=6",
        "--heartbeat-healthy-threshold=4", "--heartbeat-timeout-seconds=1",
        "--heartbeat-interval-seconds=5", "--kubelet-health-grace-period=40s",
        "--min-request-timeout=1m", "--max-requests-in-flight=10", "--gc-frequency=120",
        "--disk-cache-path=/tmp/c", "--root-dir=/tmp/yurthub", "--bootstrap-mode=token",
        "--bootstrap-file=/tmp/yurthub/bootstrap-hub.conf", "--join-token=abc.def",
        "--discovery-token-ca-cert-hash=" + hash,
        "--discovery-token-unsafe-skip-ca-verification=false",
        "--hub-cert-organizations=openyurt:tenant:a", "--enable-dummy-if=false",
        "--dummy-if-ip=169.254.2.1", "--dummy-if-name=yurthub-dummy0",
        "--enable-resource-filter", "--disabled-resource-filters=masterservice",
        "--enable-pool-service-topology=false", "--enable-iptables=f", "--enable-node-pool=1",
        "--pool-scope-resources=/v1/services", "--host-control-plane-address=",
        "--profiling=false", "--v=2", "--vmodule=proxy=4", "--log-flush-frequency=5s",
        // Portage's own.
        "--cache-agents=kubectl,*", "--ca-file=/ca.pem", "--client-cert-file=/c.pem",
        "--client-key-file=/k.pem", "--tls-cert-file=/s.pem", "--tls-private-key-file=/sk.pem");
    assertThat(c.nodeName()).isEqualTo("edge-1");
    assertThat(c.serverAddrs()).containsExactly("https://a:6443", "https://b:6443");
    assertThat(c.workingMode()).isEqualTo(WorkingMode.EDGE);
    assertThat(c.nodePoolName()).isEqualTo("hangzhou");
    assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.proxyBindAddress()).isEqualTo("169.254.2.1");
    assertThat(List.of(c.proxyPort(), c.proxySecurePort(), c.servePort())).containsExactly(1, 2, 3);
    assertThat(c.namespace()).isEqualTo("openyurt-system");
    assertThat(c.lbMode()).isEqualTo(Upstreams.LbMode.PRIORITY);
    assertThat(c.heartbeat()).isEqualTo(new Upstreams.Heartbeat(Duration.ofSeconds(5), Duration.ofSeconds(1), 4, 6));
    assertThat(c.maxRequestsInFlight()).isEqualTo(10);
    assertThat(c.minRequestTimeout()).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.diskCachePath()).isEqualTo(Path.of("/tmp/c"));
    assertThat(c.bootstrap()).isEqualTo(new NodeBootstrap(Path.of("/tmp/yurthub"),
        Path.of("/tmp/yurthub/bootstrap-hub.conf"), NodeBootstrap.Mode.TOKEN,
        List.of(hash), false));
    assertThat(c.bootstrapToken()).isEqualTo("abc.def");
    assertThat(c.profiling()).isFalse();
    assertThat(c.cacheAgents()).contains("kubectl", "*", "kubelet");
    assertThat(c.caFile()).isEqualTo(Path.of("/ca.pem"));
    assertThat(c.clientKeyFile()).isEqualTo(Path.of("/k.pem"));
    assertThat(c.tlsKeyFile()).isEqualTo(Path.of("/sk.pem"));
  }

  @Test
  void yurtHubFlagsWithoutAFeatureHereLogOneWarnEachAndNeverExit2() {
    assertThat(warnings("--multiplexer-port=10269", "--node-ip", "10.0.0.9",
        "--kubelet-health-grace-period=40s", "--gc-frequency=120", "--hub-cert-organizations=a,b",
        "--enable-dummy-if", "--dummy-if-ip=169.254.2.1", "--dummy-if-name=hub0",
        "--enable-resource-filter=true", "--disabled-resource-filters=x",
        "--enable-pool-service-topology", "--enable-iptables=false", "--enable-node-pool=0",
        "--pool-scope-resources=/v1/services", "--access-server-through-hub",
        "--kubeconfig=/k", "--hub-cert-dir=/d", "--enable-dummy-if=false"))
        .containsExactlyInAnyOrder(Stream.of("--multiplexer-port", "--node-ip",
                "--kubelet-health-grace-period", "--gc-frequency", "--hub-cert-organizations",
                "--enable-dummy-if", "--dummy-if-ip", "--dummy-if-name", "--enable-resource-filter",
                "--disabled-resource-filters", "--enable-pool-service-topology", "--enable-iptables",
                "--enable-node-pool", "--pool-scope-resources", "--access-server-through-hub",
                "--kubeconfig", "--hub-cert-dir")
            .map(f -> "flag " + f + " is accepted for compatibility with YurtHub and has no effect in Portage")
            .toArray(String[]::new));
    // Flags that take effect log nothing.
    assertThat(warnings("--node-name=n", "--server-addr=http://a", "--working-mode=cloud",
        "--nodepool-name=p", "--namespace=x", "--root-dir=/r", "--bind-proxy-address=0.0.0.0",
        "--profiling=false", "--v=2")).isEmpty();
  }

  @Test
  void pflagFormsWorkForTheHubsFlags() {
    EdgeHubConfig c = parse("--server-addr", "http://a:8080", "--node-name", "first",
        "--node-name=edge-1", "--proxy-port=1", "--proxy-port", "2", "--profiling=F",
        "--discovery-token-unsafe-skip-ca-verification", "--working-mode", "cloud");
    assertThat(c.nodeName()).isEqualTo("edge-1");
    assertThat(c.proxyPort()).isEqualTo(2);
    assertThat(c.profiling()).isFalse();
    assertThat(c.bootstrap().unsafeSkipCaVerification()).isTrue();
    assertThat(c.workingMode()).isEqualTo(WorkingMode.CLOUD);
    assertThat(parse("--server-addr=http://a", "--node-name=n", "--working-mode=local",
        "--host-control-plane-address=10.0.0.1:6443").workingMode()).isEqualTo(WorkingMode.LOCAL);
  }

  @Test
  void nodeNameIsRequiredAsInYurtHub() {
    CliRun missing = run("hub", "--server-addr=http://a:8080");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("--node-name");
    CliRun empty = run("hub", "--server-addr=http://a:8080", "--node-name=");
    assertThat(empty.exitCode()).isEqualTo(2);
    assertThat(empty.err()).contains("--node-name: empty (expected: the name of the node the hub runs on)");
  }

  @Test
  void badValuesFailWithClearMessages() {
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--lb-mode=random").err())
        .contains("--lb-mode: random (expected: rr or priority)");
    assertThat(run("hub", "--server-addr=ftp://a", "--node-name=n").err())
        .contains("server-addr: ftp://a (expected: an http:// or https:// URL)");
    assertThat(run("hub", "--server-addr=http://a,https://b", "--node-name=n").err())
        .contains("expected: all http:// or all https://");
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--max-requests-in-flight=0").err())
        .contains("max-requests-in-flight: 0 (expected: >= 1)");
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--client-cert-file=/c").err())
        .contains("client-cert-file and client-key-file: give both or neither");
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--working-mode=fog").err())
        .contains("--working-mode: fog (expected: edge, cloud or local)");
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--working-mode=local").err())
        .contains("--host-control-plane-address: empty");
    assertThat(run("hub", "--server-addr=http://a", "--node-name=n", "--bootstrap-mode=x").err())
        .contains("--bootstrap-mode: x (expected: token or kubeletcertificate)");
    CliRun unpinned = run("hub", "--server-addr=http://a", "--node-name=n",
        "--discovery-token-unsafe-skip-ca-verification=false");
    assertThat(unpinned.exitCode()).isEqualTo(2);
    assertThat(unpinned.err()).contains("without --discovery-token-ca-cert-hash");
    CliRun missing = run("hub", "--node-name=n");
    assertThat(missing.exitCode()).isNotZero();
    assertThat(missing.err()).contains("--server-addr");
  }
}
