package dev.portage.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.cli.PortageCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

class DeployManifestsTest {
  private static final Path ROOT = RepoRoot.find();

  @Test
  void everyManifestInDeployMatchesTheCode() throws IOException {
    List<String> problems = ManifestCheck.run(ROOT, ROOT.resolve("deploy"), ROOT.resolve("Containerfile"));

    assertThat(problems).as("problems in deploy/").isEmpty();
  }

  @Test
  void deployHasAManifestForEveryComponent() throws IOException {
    ManifestSet set = ManifestSet.load(ROOT, ROOT.resolve("deploy"));
    List<String> subcommands = new ArrayList<>();
    for (ManifestDoc doc : set.docs()) {
      if (ManifestCheck.WORKLOAD_KINDS.contains(doc.kind())) {
        String args = doc.node().findValues("args").toString();
        for (String sub : List.of("server", "agent", "control-plane", "service-proxy", "sidecar", "hub")) {
          if (args.contains("[\"" + sub + "\"")) {
            subcommands.add(sub);
          }
        }
      }
    }

    assertThat(subcommands).contains("server", "agent", "control-plane", "service-proxy", "sidecar", "hub");
    assertThat(set.ofKind("DaemonSet")).extracting(ManifestDoc::name)
        .contains("portage-tunnel-agent", "portage-service-proxy", "portage-hub");
    assertThat(set.ofKind("Pod")).extracting(ManifestDoc::name).containsExactly("portage-hub");
  }

  /** A new port flag must be classified, or its containerPorts and probes would go unchecked. */
  @Test
  void everyPortFlagIsAListenerOrARemotePort() {
    CommandLine portage = PortageCommand.commandLine();
    List<String> unclassified = new ArrayList<>();
    for (Map.Entry<String, CommandLine> e : portage.getSubcommands().entrySet()) {
      List<String> known = ListenerFlags.BY_SUBCOMMAND.getOrDefault(e.getKey(), List.of()).stream()
          .map(ListenerFlags.Listener::portFlag).toList();
      for (OptionSpec o : e.getValue().getCommandSpec().options()) {
        for (String name : o.names()) {
          // Go's single-dash forms (-grpc-port) are aliases of the same option.
          if (name.startsWith("--") && name.endsWith("-port") && !o.hidden() && !known.contains(name) && !ListenerFlags.REMOTE_PORTS.contains(name)) {
            unclassified.add(e.getKey() + " " + name);
          }
        }
      }
    }

    assertThat(ListenerFlags.BY_SUBCOMMAND.keySet()).containsExactlyInAnyOrderElementsOf(portage.getSubcommands().keySet());
    assertThat(unclassified).as("port flags missing from ListenerFlags").isEmpty();
  }

  /** One deliberate break of a copy of deploy/, and the words the problem must contain. */
  record Break(String name, String file, String from, String to, List<String> expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Break> breaks() {
    String server = "deploy/tunnel-server/deployment.yaml (doc 1, Deployment kube-system/portage-tunnel-server) "
        + "spec.template.spec.containers[0] (portage)";
    String plane = "deploy/control-plane/deployment.yaml (doc 1, Deployment kube-system/portage-control-plane) "
        + "spec.template.spec.containers[0] (portage)";
    return Stream.of(
        new Break("unknown flag", "tunnel-server/deployment.yaml", "- --server-count=2", "- --server-cnt=2",
            List.of(server + " args[15]: unknown flag --server-cnt for 'portage server'")),
        new Break("flag without value", "tunnel-server/deployment.yaml", "- --server-count=2", "- --server-count",
            List.of(server + " args[15]: '--server-count' (expected: --flag=value)")),
        new Break("duration that does not parse", "control-plane/deployment.yaml", "--debounce-after=100ms",
            "--debounce-after=100", List.of(plane + " args: 'portage control-plane' rejects them", "'100' is not a duration")),
        new Break("port that is not a number", "control-plane/deployment.yaml", "--grpc-port=8086", "--grpc-port=grpc",
            List.of(plane + " args: 'portage control-plane' rejects them", "--grpc-port", "'grpc'")),
        new Break("flag combination the command refuses", "tunnel-server/deployment.yaml",
            "            - --agent-service-account=portage-tunnel-agent\n", "",
            List.of(server + " args: 'portage server' refuses this combination",
                "--agent-namespace needs --agent-service-account")),
        new Break("upstream flag Portage does not implement", "tunnel-agent/deployment.yaml", "- --probe-interval=1s",
            "- --warn-on-channel-limit=true", List.of("deploy/tunnel-agent/deployment.yaml (doc 1, Deployment kube-system/portage-tunnel-agent)",
                "--warn-on-channel-limit is an upstream flag 'portage agent' does not implement")),
        new Break("unknown subcommand", "sidecar-example/deployment.yaml", "- sidecar\n", "- side-car\n",
            List.of("deploy/sidecar-example/deployment.yaml (doc 1, Deployment default/sidecar-example) "
                + "spec.template.spec.containers[1] (portage-sidecar) args[0]: 'side-car' is not a portage subcommand")),
        new Break("command overriding the entrypoint", "sidecar-example/deployment.yaml",
            "image: ghcr.io/portage-dev/portage:0.1.0\n", "image: ghcr.io/portage-dev/portage:0.1.0\n          command: [\"java\"]\n",
            List.of("containers[1] (portage-sidecar) command: replaces the image's ENTRYPOINT")),
        new Break("image other than the Containerfile's", "service-proxy/daemonset.yaml", "portage:0.1.0", "portage:0.0.9",
            List.of("deploy/service-proxy/daemonset.yaml (doc 1, DaemonSet kube-system/portage-service-proxy) "
                + "spec.template.spec.containers[0] (portage) image: 'ghcr.io/portage-dev/portage:0.0.9' "
                + "(expected: ghcr.io/portage-dev/portage:0.1.0, the image Containerfile builds)")),
        new Break("containerPort no flag opens", "tunnel-server/deployment.yaml", "containerPort: 8092", "containerPort: 8093",
            List.of(server + " ports[2]: containerPort 8093 is not a port 'portage server' listens on")),
        new Break("probe on a loopback-only admin port", "control-plane/deployment.yaml", "--admin-bind-address=0.0.0.0",
            "--admin-bind-address=127.0.0.1",
            List.of(plane + " livenessProbe.port: 9996 is --admin-port=9996 on 127.0.0.1: the kubelet probes the pod IP",
                plane + " ports[1]: containerPort 9996 is --admin-port=9996 on 127.0.0.1 (--admin-bind-address): unreachable")),
        new Break("host-network probe without host 127.0.0.1", "service-proxy/daemonset.yaml",
            "              host: 127.0.0.1\n              path: /readyz", "              path: /readyz",
            List.of("DaemonSet kube-system/portage-service-proxy) spec.template.spec.containers[0] (portage) readinessProbe.host: ''")),
        new Break("Service targetPort no flag opens", "tunnel-server/service.yaml", "targetPort: 8091", "targetPort: 8099",
            List.of("deploy/tunnel-server/service.yaml (doc 1, Service kube-system/portage-tunnel-server) spec.ports[1].targetPort: 8099 "
                + "is not a port of the Portage containers in deploy/tunnel-server/deployment.yaml")),
        new Break("Service selecting nothing", "control-plane/service.yaml",
            "selector:\n    app.kubernetes.io/name: portage-control-plane", "selector:\n    app.kubernetes.io/name: portage-control",
            List.of("deploy/control-plane/service.yaml (doc 1, Service kube-system/portage-control-plane) spec.selector: "
                + "{app.kubernetes.io/name=portage-control} selects no workload in deploy/")),
        new Break("RBAC resource that is not a CRD", "control-plane/rbac.yaml", "- tagroutes", "- tagroute",
            List.of("deploy/control-plane/rbac.yaml (doc 1, ClusterRole portage-control-plane) rules[2]: "
                + "dubbo.apache.org/tagroute is not a CRD in deploy/crds",
                plane + ": service account kube-system/portage-control-plane may not list dubbo.apache.org/tagroutes "
                    + "in every namespace (needed by --source=kubernetes (informer on dubbo.apache.org/v1alpha1/TagRoute))")),
        new Break("RBAC without a verb the flags need", "tunnel-server/rbac.yaml",
            "verbs: [\"get\", \"list\", \"watch\", \"create\", \"update\", \"patch\", \"delete\"]", "verbs: [\"get\", \"list\", \"watch\"]",
            List.of(server + ": service account kube-system/portage-tunnel-server may not create coordination.k8s.io/leases "
                + "in namespace kube-system (needed by --enable-lease-controller)")),
        new Break("binding to a service account that does not exist", "tunnel-agent/rbac.yaml",
            "    name: portage-tunnel-agent\n    namespace: kube-system", "    name: portage-agent\n    namespace: kube-system",
            List.of("deploy/tunnel-agent/rbac.yaml (doc 2, RoleBinding kube-system/portage-tunnel-agent-leases) subjects[0]: "
                + "ServiceAccount kube-system/portage-agent is not defined in deploy/",
                "may not list coordination.k8s.io/leases in namespace kube-system (needed by --count-server-leases)")),
        new Break("$(VAR) the container's env does not define", "hub/daemonset.yaml", "$(KUBERNETES_SERVICE_PORT)",
            "$(APISERVER_PORT)", List.of("deploy/hub/daemonset.yaml (doc 1, DaemonSet kube-system/portage-hub) "
                + "spec.template.spec.containers[0] (portage) args[1]: $(APISERVER_PORT) is not in the container's env")),
        new Break("YAML that does not parse", "hub/daemonset.yaml", "  selector:\n", "  selector: [unclosed\n",
            List.of("deploy/hub/daemonset.yaml: does not parse")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("breaks")
  void aBrokenManifestIsReportedWithFileAndField(Break broken, @TempDir Path tmp) throws IOException {
    copyTree(ROOT.resolve("deploy"), tmp.resolve("deploy"));
    Files.copy(ROOT.resolve("Containerfile"), tmp.resolve("Containerfile"));
    Path file = tmp.resolve("deploy").resolve(broken.file());
    String text = Files.readString(file);
    assertThat(text).as("the break's anchor in %s", broken.file()).contains(broken.from());
    Files.writeString(file, text.replace(broken.from(), broken.to()));

    List<String> problems = ManifestCheck.run(tmp, tmp.resolve("deploy"), tmp.resolve("Containerfile"));

    for (String expected : broken.expected()) {
      assertThat(problems).as("problems").anySatisfy(p -> assertThat(p).contains(expected));
    }
  }

  @Test
  void aControlPlaneKindWithoutItsCrdIsReported(@TempDir Path tmp) throws IOException {
    copyTree(ROOT.resolve("deploy"), tmp.resolve("deploy"));
    Files.copy(ROOT.resolve("Containerfile"), tmp.resolve("Containerfile"));
    Files.delete(tmp.resolve("deploy/crds/linkerd.io_serviceprofiles.yaml"));

    List<String> problems = ManifestCheck.run(tmp, tmp.resolve("deploy"), tmp.resolve("Containerfile"));

    assertThat(problems).anySatisfy(p -> assertThat(p).contains(
        "--source=kubernetes watches linkerd.io/v1alpha2/ServiceProfile, which is neither built in nor a CRD in deploy/crds"));
    assertThat(problems).anySatisfy(p -> assertThat(p).contains(
        "(doc 1, ClusterRole portage-control-plane) rules[3]: linkerd.io/serviceprofiles is not a CRD in deploy/crds"));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      walk.forEach(p -> {
        try {
          Path target = to.resolve(from.relativize(p).toString());
          if (Files.isDirectory(p)) {
            Files.createDirectories(target);
          } else {
            Files.copy(p, target);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }
}
