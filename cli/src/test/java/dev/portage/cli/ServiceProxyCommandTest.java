package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.proxy.service.ProxyMode;
import dev.portage.proxy.service.ServiceProxyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ServiceProxyCommandTest {

  @TempDir Path dir;

  private static ServiceProxyConfig parse(String... args) {
    ServiceProxyCommand command = new ServiceProxyCommand();
    new CommandLine(command).parseArgs(args);
    return command.toConfig();
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

  @Test
  void defaultsMatchKubeProxy() {
    ServiceProxyConfig c = parse("--endpoints-file=/etc/portage/endpoints.yaml");
    assertThat(c.endpointsFile()).isEqualTo(Path.of("/etc/portage/endpoints.yaml"));
    assertThat(c.minSyncPeriod()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.syncPeriod()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.syncBurst()).isEqualTo(2);
    assertThat(c.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminPort()).isEqualTo(10249);
    assertThat(c.closeRemovedEndpointConnections()).isFalse();
    assertThat(c.kubernetes()).isFalse();
    assertThat(c.ioThreads()).isZero();
    assertThat(c.maxReadSize()).isEqualTo(ServiceProxyConfig.DEFAULT_MAX_READ_SIZE);
  }

  @Test
  void ioThreadsAndReadSizeAreMappedAndChecked() {
    ServiceProxyConfig c = parse("--endpoints-file=a.yaml", "--io-threads=2", "--max-read-size=65536");
    assertThat(c.ioThreads()).isEqualTo(2);
    assertThat(c.maxReadSize()).isEqualTo(65536);
    assertThat(run("service-proxy", "--endpoints-file=a.yaml", "--max-read-size=100").err())
        .contains("maxReadSize: 100 (expected: >= 4096 and <= 16777216)");
  }

  @Test
  void everyFlagIsAccepted() {
    ServiceProxyConfig c = parse("--kubeconfig=/root/.kube/config", "--bind-address=10.0.0.7",
        "--min-sync-period=2s", "--sync-period=1m", "--admin-bind-address=0.0.0.0", "--admin-port=10256",
        "--close-removed-endpoint-connections");
    assertThat(c.kubernetes()).isTrue();
    assertThat(c.kubeconfig()).isEqualTo(Path.of("/root/.kube/config"));
    assertThat(c.bindAddress()).isEqualTo("10.0.0.7");
    assertThat(c.minSyncPeriod()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.syncPeriod()).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.adminBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.adminPort()).isEqualTo(10256);
    assertThat(c.closeRemovedEndpointConnections()).isTrue();
    assertThat(parse("--kubernetes").kubernetes()).isTrue();
    ServiceProxyConfig destination = parse("--endpoints-file=a.yaml", "--destination-addr=127.0.0.1:8086");
    assertThat(destination.destinationAddr()).isEqualTo("127.0.0.1:8086");
    assertThat(destination.endpointsFile()).isEqualTo(Path.of("a.yaml"));
  }

  @Test
  void destinationTlsFlagsAreMappedAndChecked() {
    ServiceProxyConfig c = parse("--endpoints-file=a.yaml", "--destination-addr=cp.portage:8086",
        "--destination-ca=/etc/portage/ca.pem", "--destination-cert=/etc/portage/proxy.pem",
        "--destination-key=/etc/portage/proxy-key.pem", "--destination-server-name=control-plane.portage");
    assertThat(c.destinationTls()).isEqualTo(new ControlPlaneTls(Path.of("/etc/portage/ca.pem"),
        Path.of("/etc/portage/proxy.pem"), Path.of("/etc/portage/proxy-key.pem"), "control-plane.portage"));
    assertThat(parse("--endpoints-file=a.yaml", "--destination-addr=cp:8086").destinationTls())
        .as("plaintext without --destination-ca").isNull();

    CliRun keyless = run("service-proxy", "--endpoints-file=a.yaml", "--destination-addr=cp:8086",
        "--destination-cert=/etc/portage/proxy.pem");
    assertThat(keyless.exitCode()).isEqualTo(2);
    assertThat(keyless.err()).contains("client certificate: /etc/portage/proxy.pem, key: null (expected: both or neither)");
    CliRun withoutAddr = run("service-proxy", "--endpoints-file=a.yaml", "--destination-ca=/etc/portage/ca.pem");
    assertThat(withoutAddr.exitCode()).isEqualTo(2);
    assertThat(withoutAddr.err()).contains("destinationTls: set (expected: only with destinationAddr)");
  }

  @Test
  void rejectsMissingOrConflictingSources() {
    assertThatThrownBy(() -> parse())
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageStartingWith("endpoint source: none given");
    CliRun run = run("service-proxy", "--endpoints-file=a.yaml", "--kubernetes");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("endpoint source: several given");
  }

  @Test
  void rejectsBadDurations() {
    CliRun run = run("service-proxy", "--endpoints-file=a.yaml", "--sync-period=soon");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("'soon' is not a duration");
    assertThat(run("service-proxy", "--endpoints-file=a.yaml", "--min-sync-period=1m").err())
        .contains("syncPeriod: PT30S (expected: > 0 and >= minSyncPeriod PT1M)");
  }

  @Test
  void malformedEndpointsFileFailsWithFileAndLine() throws Exception {
    Path file = dir.resolve("endpoints.yaml");
    Files.writeString(file, "services:\n  - name: web\n    listen: 127.0.0.1:0\n    endpoints: [\"x\"]\n");

    CliRun run = run("service-proxy", "--endpoints-file=" + file, "--admin-port=-1");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).contains(file.toAbsolutePath() + ":4: services[0]: web: endpoints: x (expected: host:port)");
  }

  /** Parses like {@code portage service-proxy ARGS}, with the upstream flag forms installed. */
  private static ServiceProxyConfig parseAsPortage(String... args) {
    CommandLine root = PortageCommand.commandLine();
    String[] all = new String[args.length + 1];
    all[0] = "service-proxy";
    System.arraycopy(args, 0, all, 1, args.length);
    CommandLine.ParseResult result = root.parseArgs(all);
    ServiceProxyCommand command = (ServiceProxyCommand) result.subcommand().commandSpec().userObject();
    return command.toConfig();
  }

  @Test
  void kubeProxyFlagsTakeEffect() {
    ServiceProxyConfig c = parseAsPortage("--kubernetes", "--proxy-mode=nftables", "--hostname-override=Node-1",
        "--cluster-cidr=10.244.0.0/16", "--masquerade-all", "--nodeport-addresses=192.168.0.0/16,10.0.0.0/8",
        "--healthz-bind-address=0.0.0.0:10266", "--metrics-bind-address=127.0.0.1:10259",
        "--iptables-sync-period=45s", "--iptables-min-sync-period=2s", "--iptables-masquerade-bit=15", "-v=4");
    assertThat(c.proxyMode()).isEqualTo(ProxyMode.NFTABLES);
    assertThat(c.hostname()).isEqualTo("node-1");
    assertThat(c.nftables().clusterCidr()).isEqualTo("10.244.0.0/16");
    assertThat(c.nftables().masqueradeAll()).isTrue();
    assertThat(c.nftables().nodePortCidrs()).containsExactly("192.168.0.0/16", "10.0.0.0/8");
    assertThat(c.nftables().masqueradeBit()).isEqualTo(15);
    assertThat(c.healthzPort()).isEqualTo(10266);
    assertThat(c.adminBindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.adminPort()).isEqualTo(10259);
    assertThat(c.syncPeriod()).isEqualTo(Duration.ofSeconds(45));
    assertThat(c.minSyncPeriod()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void kubeProxyDefaultsWithTheKubernetesSource() {
    ServiceProxyConfig c = parseAsPortage("--kubernetes");
    assertThat(c.proxyMode()).isEqualTo(ProxyMode.NFTABLES);
    assertThat(c.healthzBindAddress()).isEqualTo("0.0.0.0");
    assertThat(c.healthzPort()).isEqualTo(10256);
    assertThat(c.nftables().nodePortCidrs()).isEmpty();
    assertThat(c.fullSyncPeriod()).isEqualTo(Duration.ofHours(1));
    assertThat(parseAsPortage("--endpoints-file=a.yaml").proxyMode()).isEqualTo(ProxyMode.USERSPACE);
    assertThat(parseAsPortage("--kubernetes", "--proxy-mode", "iptables").proxyMode()).isEqualTo(ProxyMode.NFTABLES);
    assertThat(parseAsPortage("--kubernetes", "--nodeport-addresses=primary").nftables().nodePortCidrs()).isEmpty();
  }

  @Test
  void unimplementedKubeProxyFlagsAreAcceptedNotExit2() {
    ServiceProxyConfig c = parseAsPortage("--kubernetes", "--conntrack-max-per-core=0", "--oom-score-adj=-999",
        "--profiling", "--feature-gates=NFTablesProxyMode=true", "--detect-local-mode", "ClusterCIDR");
    assertThat(c.kubernetes()).isTrue();
    assertThat(run("service-proxy", "--proxy-mode=bogus", "--kubernetes").err())
        .contains("--proxy-mode: bogus (expected: nftables, userspace, iptables or ipvs)");
    assertThat(run("service-proxy", "--endpoints-file=a.yaml", "--proxy-mode=nftables").err())
        .contains("proxyMode: nftables (expected: with --kubernetes or --kubeconfig");
  }

  @Test
  void kubeProxyConfigurationFileOverridesFlags() throws Exception {
    Path file = dir.resolve("config.yaml");
    Files.writeString(file, """
        apiVersion: kubeproxy.config.k8s.io/v1alpha1
        kind: KubeProxyConfiguration
        mode: nftables
        clusterCIDR: 10.244.0.0/16
        hostnameOverride: worker-7
        healthzBindAddress: 0.0.0.0:10356
        metricsBindAddress: 0.0.0.0:10349
        nodePortAddresses: ["192.168.1.0/24"]
        clientConnection:
          kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
          qps: 5
        nftables:
          masqueradeAll: true
          minSyncPeriod: 3s
          syncPeriod: 40s
        conntrack:
          maxPerCore: 0
        """);
    ServiceProxyConfig c = parseAsPortage("--config", file.toString(), "--cluster-cidr=10.0.0.0/8");
    assertThat(c.kubernetes()).isTrue();
    assertThat(c.kubeconfig()).isEqualTo(Path.of("/var/lib/kube-proxy/kubeconfig.conf"));
    assertThat(c.nftables().clusterCidr()).isEqualTo("10.244.0.0/16");
    assertThat(c.hostname()).isEqualTo("worker-7");
    assertThat(c.healthzPort()).isEqualTo(10356);
    assertThat(c.adminPort()).isEqualTo(10349);
    assertThat(c.nftables().nodePortCidrs()).containsExactly("192.168.1.0/24");
    assertThat(c.nftables().masqueradeAll()).isTrue();
    assertThat(c.minSyncPeriod()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.syncPeriod()).isEqualTo(Duration.ofSeconds(40));
    assertThat(parseAsPortage("--config", file.toString(), "--hostname-override=mine").hostname()).isEqualTo("mine");

    Path wrong = dir.resolve("wrong.yaml");
    Files.writeString(wrong, "apiVersion: v1\nkind: ConfigMap\n");
    assertThat(run("service-proxy", "--config=" + wrong).err()).contains("not a KubeProxyConfiguration (kind: ConfigMap)");
  }

  @Test
  void isRegisteredUnderPortage() {
    assertThat(PortageCommand.commandLine().getSubcommands()).containsKey("service-proxy");
  }
}
