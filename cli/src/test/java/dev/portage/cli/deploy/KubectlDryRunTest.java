package dev.portage.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.portage.core.testing.MockApiServers;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kubectl apply --dry-run=client --validate=false -f deploy/<dir>} against a fabric8 mock API
 * server that serves discovery for the built-in kinds deploy/ uses plus the CRDs in deploy/crds.
 * kubectl needs a server even for a client dry run (it maps kinds to resources by discovery and GETs
 * each object to choose create or patch); with no cluster here the mock is that server. What it
 * proves: kubectl decodes every document of the directory, each apiVersion/kind maps to a served
 * resource with the right scope, and each object would be created at the expected REST path. What
 * it does not: OpenAPI schema validation (that needs a real API server's schemas; --validate=false).
 */
class KubectlDryRunTest {
  private static final Path ROOT = RepoRoot.find();

  @TempDir Path tmp;
  private KubernetesMockServer server;
  private DiscoveryDispatcher discovery;
  private Path kubeconfig;

  @BeforeEach
  void startApiServer() throws IOException {
    assumeTrue(kubectlInstalled(), "kubectl is not on PATH (preinstalled on the project's machines; not an apt package)");
    List<DiscoveryDispatcher.Kind> kinds = new ArrayList<>(DiscoveryDispatcher.BUILTIN);
    for (ManifestDoc crd : ManifestSet.load(ROOT, ROOT.resolve("deploy/crds")).ofKind("CustomResourceDefinition")) {
      var spec = crd.node().path("spec");
      for (var v : spec.path("versions")) {
        kinds.add(new DiscoveryDispatcher.Kind(spec.path("group").asText(), v.path("name").asText(),
            spec.path("names").path("kind").asText(), spec.path("names").path("plural").asText(),
            spec.path("scope").asText().equals("Namespaced")));
      }
    }
    discovery = new DiscoveryDispatcher(kinds);
    server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), discovery, false);
    server.init();
    kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
          - name: mock
            cluster:
              server: http://127.0.0.1:%d
        contexts:
          - name: mock
            context:
              cluster: mock
              user: nobody
              namespace: default
        current-context: mock
        users:
          - name: nobody
            user: {}
        """.formatted(server.getPort()));
  }

  @AfterEach
  void stopApiServer() {
    if (server != null) {
      MockApiServers.destroy(server);
    }
  }

  @ParameterizedTest(name = "deploy/{0}")
  @ValueSource(strings = {"crds", "tunnel-server", "tunnel-agent", "tunnel-agent/daemonset", "control-plane",
      "service-proxy", "hub", "hub/static-pod", "sidecar-example"})
  void kubectlDryRunCreatesEveryObjectOfTheDirectory(String dir) throws Exception {
    Path path = ROOT.resolve("deploy").resolve(dir);
    List<ManifestDoc> docs = ManifestSet.load(ROOT, path).docs().stream()
        .filter(d -> d.file().getParent().equals(ROOT.relativize(path)))
        .toList();

    Result result = kubectl("apply", "--dry-run=client", "--validate=false", "-f", path.toString());

    assertThat(result.exit()).as("kubectl exit status; output:\n%s", result.output()).isZero();
    assertThat(docs).isNotEmpty();
    for (ManifestDoc d : docs) {
      assertThat(result.output()).as("kubectl output").containsPattern("(?m)/" + Pattern.quote(d.name()) + " (created|configured) \\(dry run\\)$");
    }
    assertThat(result.output().lines().filter(l -> l.endsWith("(dry run)")).count()).isEqualTo(docs.size());
  }

  @Test
  void kubectlAsksForEachObjectAtItsRestPath() throws Exception {
    Result result = kubectl("apply", "--dry-run=client", "--validate=false", "-f", ROOT.resolve("deploy/tunnel-server").toString());

    assertThat(result.exit()).as("output:\n%s", result.output()).isZero();
    assertThat(discovery.requests()).contains(
        "GET /api/v1/namespaces/kube-system/serviceaccounts/portage-tunnel-server",
        "GET /apis/apps/v1/namespaces/kube-system/deployments/portage-tunnel-server",
        "GET /apis/rbac.authorization.k8s.io/v1/clusterroles/portage-tunnel-server-tokenreviews");
  }

  @Test
  void aKindTheApiServerDoesNotServeFailsTheDryRunNamingTheFile() throws Exception {
    Path broken = tmp.resolve("broken");
    Files.createDirectories(broken);
    String text = Files.readString(ROOT.resolve("deploy/control-plane/deployment.yaml")).replace("kind: Deployment", "kind: Deploymnt");
    Files.writeString(broken.resolve("deployment.yaml"), text);

    Result result = kubectl("apply", "--dry-run=client", "--validate=false", "-f", broken.toString());

    assertThat(result.exit()).isNotZero();
    assertThat(result.output()).contains("deployment.yaml").contains("Deploymnt");
  }

  @Test
  void aDocumentThatDoesNotDecodeFailsTheDryRun() throws Exception {
    Path broken = tmp.resolve("broken");
    Files.createDirectories(broken);
    Files.writeString(broken.resolve("service.yaml"),
        Files.readString(ROOT.resolve("deploy/control-plane/service.yaml")).replace("port: 8086", "port: [8086"));

    Result result = kubectl("apply", "--dry-run=client", "--validate=false", "-f", broken.toString());

    assertThat(result.exit()).isNotZero();
    assertThat(result.output()).contains("service.yaml");
  }

  private record Result(int exit, String output) {}

  private Result kubectl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("kubectl", "--kubeconfig", kubeconfig.toString(),
        "--cache-dir", tmp.resolve("cache").toString(), "--request-timeout=20s"));
    command.addAll(List.of(args));
    File out = tmp.resolve("kubectl.out").toFile();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out).start();
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        throw new AssertionError("kubectl did not finish in 60 s: " + command);
      }
    } finally {
      p.destroyForcibly();
    }
    return new Result(p.exitValue(), Files.readString(out.toPath()));
  }

  private static boolean kubectlInstalled() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "kubectl"))) {
        return true;
      }
    }
    return false;
  }
}
