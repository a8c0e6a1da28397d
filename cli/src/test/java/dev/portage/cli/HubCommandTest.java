package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.hub.EdgeHubConfig;
import dev.portage.hub.remote.Upstreams;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class HubCommandTest {

  private static EdgeHubConfig parse(String... args) {
    HubCommand command = new HubCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  private record Run(int exitCode, String err) {}

  private static Run run(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setErr(new PrintWriter(err));
    cl.getSubcommands().get("hub").setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new Run(code, err.toString());
  }

  @Test
  void defaultsMatchYurtHub() {
    EdgeHubConfig c = parse("--server-addr=https://10.0.0.1:6443");
    assertThat(c.serverAddrs()).containsExactly("https://10.0.0.1:6443");
    assertThat(c.lbMode()).isEqualTo(Upstreams.LbMode.RR);
    assertThat(c.bindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.proxyPort()).isEqualTo(10261);
    assertThat(c.proxySecurePort()).isEqualTo(10268);
    assertThat(c.servePort()).isEqualTo(10267);
    assertThat(c.diskCachePath()).isEqualTo(Path.of("/etc/kubernetes/cache/"));
    assertThat(c.heartbeat()).isEqualTo(Upstreams.Heartbeat.defaults());
    assertThat(c.maxRequestsInFlight()).isEqualTo(250);
    assertThat(c.minRequestTimeout()).isEqualTo(Duration.ofSeconds(1800));
    assertThat(c.cacheAgents()).containsExactlyInAnyOrder("kubelet", "kube-proxy", "flanneld", "coredns");
    assertThat(c.caFile()).isNull();
    assertThat(c.tlsCertFile()).isNull();
    assertThat(c.bootstrapToken()).isEmpty();
  }

  @Test
  void everyHubFlagIsAccepted() {
    EdgeHubConfig c = parse(
        "--server-addr=https://a:6443,https://b:6443", "--lb-mode=priority", "--bind-address=0.0.0.0",
        "--proxy-port=1", "--proxy-secure-port=2", "--serve-port=3", "--disk-cache-path=/tmp/c",
        "--heartbeat-interval-seconds=5", "--heartbeat-timeout-seconds=1",
        "--heartbeat-healthy-threshold=4", "--heartbeat-failed-retry=6",
        "--max-requests-in-flight=10", "--min-request-timeout=1m", "--cache-agents=kubectl,*",
        "--ca-file=/ca.pem", "--client-cert-file=/c.pem", "--client-key-file=/k.pem",
        "--tls-cert-file=/s.pem", "--tls-private-key-file=/sk.pem", "--join-token=abc.def");
    assertThat(c.serverAddrs()).containsExactly("https://a:6443", "https://b:6443");
    assertThat(c.lbMode()).isEqualTo(Upstreams.LbMode.PRIORITY);
    assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(List.of(c.proxyPort(), c.proxySecurePort(), c.servePort())).containsExactly(1, 2, 3);
    assertThat(c.heartbeat()).isEqualTo(new Upstreams.Heartbeat(Duration.ofSeconds(5), Duration.ofSeconds(1), 4, 6));
    assertThat(c.maxRequestsInFlight()).isEqualTo(10);
    assertThat(c.minRequestTimeout()).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.cacheAgents()).contains("kubectl", "*", "kubelet");
    assertThat(c.caFile()).isEqualTo(Path.of("/ca.pem"));
    assertThat(c.clientKeyFile()).isEqualTo(Path.of("/k.pem"));
    assertThat(c.tlsKeyFile()).isEqualTo(Path.of("/sk.pem"));
    assertThat(c.bootstrapToken()).isEqualTo("abc.def");
  }

  @Test
  void unimplementedYurtHubFlagsFailWithNotSupportedYet() {
    Run r = run("hub", "--server-addr=http://a:8080", "--node-name=n1");
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err()).contains("--node-name: not supported yet");
    Run w = run("hub", "--server-addr=http://a:8080", "--working-mode", "edge");
    assertThat(w.exitCode()).isNotZero();
    assertThat(w.err()).contains("--working-mode: not supported yet");
  }

  @Test
  void badValuesFailWithClearMessages() {
    assertThat(run("hub", "--server-addr=http://a", "--lb-mode=random").err())
        .contains("--lb-mode: random (expected: rr or priority)");
    assertThat(run("hub", "--server-addr=ftp://a").err())
        .contains("server-addr: ftp://a (expected: an http:// or https:// URL)");
    assertThat(run("hub", "--server-addr=http://a,https://b").err())
        .contains("expected: all http:// or all https://");
    assertThat(run("hub", "--server-addr=http://a", "--max-requests-in-flight=0").err())
        .contains("max-requests-in-flight: 0 (expected: >= 1)");
    assertThat(run("hub", "--server-addr=http://a", "--client-cert-file=/c").err())
        .contains("client-cert-file and client-key-file: give both or neither");
    Run missing = run("hub");
    assertThat(missing.exitCode()).isNotZero();
    assertThat(missing.err()).contains("--server-addr");
  }
}
