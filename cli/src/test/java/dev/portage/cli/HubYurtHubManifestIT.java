package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServers;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container command of OpenYurt's stock YurtHub manifest (its YurtStaticSet / DaemonSet
 * template: {@code --v=2 --bind-address --server-addr --node-name=$(NODE_NAME) --bootstrap-file
 * --working-mode=edge --namespace --hub-cert-organizations --nodepool-name}) starts {@code portage
 * hub} through the real launcher, which then proxies for a kubelet with the bootstrap file's token,
 * answers its health check, and stops on SIGTERM with exit code 0. The manifest's paths and ports
 * are moved into a temp dir by flags appended after it (pflag: the last value wins), so the test
 * needs no root and no fixed port.
 */
class HubYurtHubManifestIT {

  private static final Path LAUNCHER = Path.of("..", "bin", "portage").toAbsolutePath().normalize();
  private static final Pattern PROXY = Pattern.compile("proxy /127\\.0\\.0\\.1:(\\d+)");
  private static final Pattern SERVER = Pattern.compile("hub server /127\\.0\\.0\\.1:(\\d+)");

  @TempDir Path dir;

  @Test
  void theStockYurtHubCommandStartsPortageHub() throws Exception {
    var expectations = new java.util.HashMap<io.fabric8.mockwebserver.ServerRequest,
        java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    KubernetesMockServer api = new KubernetesMockServer(new io.fabric8.mockwebserver.Context(),
        new io.fabric8.mockwebserver.MockWebServer(), expectations,
        new io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher(expectations), false);
    api.init(InetAddress.getLoopbackAddress(), 0);
    Process hub = null;
    try {
      try (KubernetesClient c = api.createClient()) {
        c.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
            .withName("web-0").withNamespace("default").endMetadata().withNewSpec()
            .withNodeName("edge-node-1").endSpec().build()).create();
      }
      Path bootstrap = Files.writeString(dir.resolve("bootstrap-hub.conf"), """
          apiVersion: v1
          kind: Config
          clusters:
          - cluster:
              server: http://127.0.0.1:%d
            name: cluster
          contexts:
          - context:
              cluster: cluster
              user: token-bootstrap-client
            name: token-bootstrap-client@cluster
          current-context: token-bootstrap-client@cluster
          users:
          - name: token-bootstrap-client
            user:
              token: abcdef.0123456789abcdef
          """.formatted(api.getPort()));

      List<String> command = new ArrayList<>(List.of("bash", LAUNCHER.toString(), "hub"));
      // The stock container command, $(NODE_NAME) expanded as the kubelet does from the env
      // (fieldRef spec.nodeName).
      command.addAll(List.of(
          "--v=2",
          "--bind-address=127.0.0.1",
          "--server-addr=http://127.0.0.1:" + api.getPort(),
          "--node-name=edge-node-1",
          "--bootstrap-file=" + bootstrap,
          "--working-mode=edge",
          "--namespace=kube-system",
          "--hub-cert-organizations=openyurt:tenant:demo",
          "--nodepool-name=hangzhou"));
      command.addAll(List.of("--disk-cache-path=" + dir.resolve("cache"),
          "--root-dir=" + dir.resolve("yurthub"), "--proxy-port=0", "--proxy-secure-port=0",
          "--serve-port=0"));
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      pb.environment().remove("JAVA_HOME");
      hub = pb.start();
      List<String> output = new CopyOnWriteArrayList<>();
      BufferedReader lines = new BufferedReader(
          new InputStreamReader(hub.getInputStream(), StandardCharsets.UTF_8));
      String started = null;
      for (String line; (line = lines.readLine()) != null; ) {
        output.add(line);
        if (line.contains("Edge hub started")) {
          started = line;
          break;
        }
      }
      assertThat(started).as(String.join("\n", output)).isNotNull()
          .contains("node edge-node-1 in pool hangzhou", "edge mode", "token from --bootstrap-file");
      Thread drain = new Thread(() -> lines.lines().forEach(output::add), "hub-output");
      drain.setDaemon(true);
      drain.start();

      int proxy = port(PROXY, started);
      int server = port(SERVER, started);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> health = http.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + server + "/v1/healthz")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).isEqualTo("OK");
      HttpResponse<String> pod = http.send(HttpRequest.newBuilder(URI.create(
              "http://127.0.0.1:" + proxy + "/api/v1/namespaces/default/pods/web-0"))
          .header("User-Agent", "kubelet/v1.32.0 (linux/amd64) kubernetes/70d3cc9")
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(pod.statusCode()).isEqualTo(200);
      assertThat(pod.body()).contains("\"name\":\"web-0\"");
      assertThat(api.getLastRequest().getHeader("Authorization"))
          .isEqualTo("Bearer abcdef.0123456789abcdef");
      await().atMost(Duration.ofSeconds(10))
          .until(() -> Files.exists(dir.resolve("cache/kubelet/pods/default/web-0")));

      assertThat(new ProcessBuilder("kill", "-TERM", Long.toString(hub.pid())).start().waitFor())
          .isZero();
      assertThat(hub.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(hub.exitValue()).as(String.join("\n", output)).isZero();
      // One WARN for the one flag whose feature the hub does not have; none for the others.
      assertThat(output).filteredOn(l -> l.contains(" WARN ") && l.contains("flag --"))
          .singleElement().satisfies(l -> assertThat(l).contains(
              "flag --hub-cert-organizations is accepted for compatibility with YurtHub"));
    } finally {
      if (hub != null && hub.isAlive()) {
        hub.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      MockApiServers.destroy(api);
    }
  }

  private static int port(Pattern pattern, String line) {
    Matcher m = pattern.matcher(line);
    assertThat(m.find()).as(line).isTrue();
    return Integer.parseInt(m.group(1));
  }
}
