package dev.portage.cli.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.portage.cli.PortageCommand;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Checks every manifest under a deploy directory against the code: images, the {@code portage}
 * subcommand and flags in each container's args (parsed by the real picocli command and its
 * {@code toConfig()} cross-flag rules), container ports, probes and Service target ports against the
 * ports those flags open, RBAC resources against built-in kinds and deploy/crds, and each service
 * account's grants against what the flags make the component call. Every problem names the file,
 * the document and the field.
 */
final class ManifestCheck {

  static final Set<String> WORKLOAD_KINDS = Set.of("Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job");

  /** Built-in resources RBAC rules in deploy/ may name, by API group. */
  static final Map<String, Set<String>> BUILTIN_RESOURCES = Map.of(
      "", Set.of("services", "endpoints", "pods", "nodes", "namespaces", "configmaps", "secrets", "events",
          "serviceaccounts"),
      "apps", Set.of("deployments", "daemonsets", "replicasets", "statefulsets"),
      "coordination.k8s.io", Set.of("leases"),
      "discovery.k8s.io", Set.of("endpointslices"),
      "authentication.k8s.io", Set.of("tokenreviews"),
      "authorization.k8s.io", Set.of("subjectaccessreviews"),
      "events.k8s.io", Set.of("events"));

  /** Built-in kinds the control plane watches, as {@code apiVersion/Kind}, and their resources. */
  private static final Map<String, String> BUILTIN_KINDS = Map.of(
      "v1/Service", "services",
      "discovery.k8s.io/v1/EndpointSlice", "endpointslices");

  /** A listener a container opens with its args. */
  record Open(String portFlag, int port, String bindFlag, String bind) {
    boolean loopback() {
      return ListenerFlags.isLoopback(bind);
    }

    @Override
    public String toString() {
      return portFlag + "=" + port + " on " + (bind.isEmpty() ? "all addresses" : bind);
    }
  }

  /** A checked Portage container: its listeners and named ports. */
  record PortageContainer(String name, List<Open> listeners, Map<String, Integer> namedPorts) {
    Open listenerOn(int port) {
      return listeners.stream().filter(o -> o.port() == port).findFirst().orElse(null);
    }
  }

  /** A pod template (or static pod) with its Portage containers. */
  record Workload(ManifestDoc doc, Map<String, String> labels, boolean hostNetwork, List<PortageContainer> containers,
      boolean argsBroken) {}

  /**
   * Sample values for Kubernetes {@code $(VAR)} references in args: the kubelet expands them before
   * the process sees them, so the check parses what the process would get.
   */
  private static final Map<String, String> FIELD_SAMPLES = Map.of(
      "status.hostIP", "10.0.0.7",
      "status.podIP", "10.244.0.7",
      "spec.nodeName", "node-1",
      "metadata.name", "pod-1",
      "metadata.namespace", "kube-system");

  /** Variables the kubelet injects into every container. */
  private static final Map<String, String> KUBELET_ENV = Map.of(
      "KUBERNETES_SERVICE_HOST", "10.96.0.1",
      "KUBERNETES_SERVICE_PORT", "443");

  private static final Pattern VAR_REF = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

  private final ContainerBuildFile buildFile;
  private final ManifestSet set;
  private final List<String> problems = new ArrayList<>();
  /** CRDs in the deploy tree: group -> plurals, and group/version/Kind -> plural. */
  private final Map<String, Set<String>> crdPlurals = new HashMap<>();
  private final Map<String, String> crdKinds = new HashMap<>();
  private final List<Workload> workloads = new ArrayList<>();
  /** Service account "ns/name" -> grants (namespace null = cluster-wide). */
  private final Map<String, List<Grant>> grants = new HashMap<>();

  private record Grant(String namespace, JsonNode rules) {}

  private ManifestCheck(ContainerBuildFile buildFile, ManifestSet set) {
    this.buildFile = buildFile;
    this.set = set;
  }

  /** All problems of the manifests under {@code deployDir}; empty when they match the code. */
  static List<String> run(Path root, Path deployDir, Path containerfile) throws IOException {
    ManifestCheck check = new ManifestCheck(ContainerBuildFile.parse(containerfile), ManifestSet.load(root, deployDir));
    check.problems.addAll(check.set.parseProblems());
    check.collectCrds();
    check.checkRbacObjects();
    check.checkWorkloads();
    check.checkServices();
    return List.copyOf(check.problems);
  }

  private void collectCrds() {
    for (ManifestDoc crd : set.ofKind("CustomResourceDefinition")) {
      JsonNode spec = crd.node().path("spec");
      String group = spec.path("group").asText();
      String plural = spec.path("names").path("plural").asText();
      String kind = spec.path("names").path("kind").asText();
      crdPlurals.computeIfAbsent(group, g -> new TreeSet<>()).add(plural);
      for (JsonNode v : spec.path("versions")) {
        crdKinds.put(group + "/" + v.path("name").asText() + "/" + kind, plural);
      }
    }
  }

  private void checkRbacObjects() {
    Map<String, JsonNode> roles = new HashMap<>();
    Set<String> serviceAccounts = new HashSet<>();
    for (ManifestDoc sa : set.ofKind("ServiceAccount")) {
      serviceAccounts.add(sa.namespace() + "/" + sa.name());
    }
    for (String kind : List.of("Role", "ClusterRole")) {
      for (ManifestDoc role : set.ofKind(kind)) {
        roles.put(kind + "/" + (kind.equals("Role") ? role.namespace() : "") + "/" + role.name(), role.node().path("rules"));
        JsonNode rules = role.node().path("rules");
        for (int i = 0; i < rules.size(); i++) {
          checkRule(role, i, rules.get(i));
        }
      }
    }
    for (String kind : List.of("RoleBinding", "ClusterRoleBinding")) {
      for (ManifestDoc binding : set.ofKind(kind)) {
        JsonNode ref = binding.node().path("roleRef");
        String refKind = ref.path("kind").asText();
        String key = refKind + "/" + (refKind.equals("Role") ? binding.namespace() : "") + "/" + ref.path("name").asText();
        JsonNode rules = roles.get(key);
        if (rules == null) {
          problems.add(binding.where() + " roleRef: " + refKind + " " + ref.path("name").asText() + " is not defined in deploy/");
          continue;
        }
        JsonNode subjects = binding.node().path("subjects");
        for (int i = 0; i < subjects.size(); i++) {
          JsonNode s = subjects.get(i);
          if (!s.path("kind").asText().equals("ServiceAccount")) {
            continue;
          }
          String ns = s.path("namespace").asText(kind.equals("RoleBinding") ? binding.namespace() : "");
          String sa = ns + "/" + s.path("name").asText();
          if (!serviceAccounts.contains(sa)) {
            problems.add(binding.where() + " subjects[" + i + "]: ServiceAccount " + sa + " is not defined in deploy/");
          }
          grants.computeIfAbsent(sa, k -> new ArrayList<>())
              .add(new Grant(kind.equals("RoleBinding") ? binding.namespace() : null, rules));
        }
      }
    }
  }

  private void checkRule(ManifestDoc role, int index, JsonNode rule) {
    for (JsonNode g : rule.path("apiGroups")) {
      String group = g.asText();
      for (JsonNode r : rule.path("resources")) {
        String resource = r.asText();
        String base = resource.contains("/") ? resource.substring(0, resource.indexOf('/')) : resource;
        if (group.equals("*") || base.equals("*")) {
          continue;
        }
        String field = role.where() + " rules[" + index + "]: " + (group.isEmpty() ? "" : group + "/") + base;
        Set<String> builtin = BUILTIN_RESOURCES.get(group);
        if (builtin != null) {
          if (!builtin.contains(base)) {
            problems.add(field + " is not a built-in resource of group '" + group + "' (expected one of " + new TreeSet<>(builtin) + ")");
          }
        } else if (!crdPlurals.getOrDefault(group, Set.of()).contains(base)) {
          problems.add(field + " is not a CRD in deploy/crds (CRDs of that group: "
              + crdPlurals.getOrDefault(group, Set.of()) + ")");
        }
      }
    }
  }

  private void checkWorkloads() {
    Set<String> subcommands = PortageCommand.commandLine().getSubcommands().keySet();
    Set<String> serviceAccounts = new HashSet<>();
    for (ManifestDoc sa : set.ofKind("ServiceAccount")) {
      serviceAccounts.add(sa.namespace() + "/" + sa.name());
    }
    for (ManifestDoc doc : set.docs()) {
      if (!WORKLOAD_KINDS.contains(doc.kind())) {
        continue;
      }
      boolean pod = doc.kind().equals("Pod");
      JsonNode podSpec = pod ? doc.node().path("spec") : doc.node().path("spec").path("template").path("spec");
      String specPath = pod ? "spec" : "spec.template.spec";
      JsonNode labelsNode = pod ? doc.node().path("metadata").path("labels")
          : doc.node().path("spec").path("template").path("metadata").path("labels");
      Map<String, String> labels = new LinkedHashMap<>();
      labelsNode.fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
      boolean hostNetwork = podSpec.path("hostNetwork").asBoolean(false);
      String sa = podSpec.path("serviceAccountName").asText("default");
      if (!sa.equals("default") && !serviceAccounts.contains(doc.namespace() + "/" + sa)) {
        problems.add(doc.where() + " " + specPath + ".serviceAccountName: " + sa + " is not defined in deploy/");
      }
      List<PortageContainer> portage = new ArrayList<>();
      boolean broken = false;
      for (String list : List.of("initContainers", "containers")) {
        JsonNode containers = podSpec.path(list);
        for (int i = 0; i < containers.size(); i++) {
          JsonNode c = containers.get(i);
          String field = doc.where() + " " + specPath + "." + list + "[" + i + "] (" + c.path("name").asText() + ")";
          if (!isPortage(c, subcommands)) {
            continue;
          }
          PortageContainer checked = checkContainer(doc, field, c, hostNetwork, sa);
          if (checked != null) {
            portage.add(checked);
          } else {
            broken = true;
          }
        }
      }
      workloads.add(new Workload(doc, labels, hostNetwork, portage, broken));
    }
  }

  /** A container runs Portage if its image, its name or its first argument says so. */
  private static boolean isPortage(JsonNode c, Set<String> subcommands) {
    String first = c.path("args").path(0).asText("");
    return c.path("image").asText("").contains("portage") || c.path("name").asText("").startsWith("portage")
        || subcommands.contains(first);
  }

  private PortageContainer checkContainer(ManifestDoc doc, String field, JsonNode c, boolean hostNetwork, String sa) {
    String image = c.path("image").asText("");
    if (!image.equals(buildFile.imageName())) {
      problems.add(field + " image: '" + image + "' (expected: " + buildFile.imageName() + ", the image "
          + buildFile.file().getFileName() + " builds)");
    }
    if (c.has("command")) {
      problems.add(field + " command: replaces the image's ENTRYPOINT (java -jar portage.jar); "
          + "put the subcommand first in args instead");
    }
    List<String> args = new ArrayList<>();
    JsonNode argsNode = c.path("args");
    for (int i = 0; i < argsNode.size(); i++) {
      args.add(expand(field + " args[" + i + "]", argsNode.get(i).asText(), c.path("env")));
    }
    if (args.isEmpty()) {
      problems.add(field + " args: empty (expected: <subcommand> --flag=value ...)");
      return null;
    }
    CommandLine top = PortageCommand.commandLine();
    CommandLine sub = top.getSubcommands().get(args.get(0));
    if (sub == null) {
      problems.add(field + " args[0]: '" + args.get(0) + "' is not a portage subcommand (expected one of "
          + new TreeSet<>(top.getSubcommands().keySet()) + ")");
      return null;
    }
    String subName = args.get(0);
    int before = problems.size();
    for (int i = 1; i < args.size(); i++) {
      String arg = args.get(i);
      int eq = arg.indexOf('=');
      if (!arg.startsWith("--") || eq < 0) {
        problems.add(field + " args[" + i + "]: '" + arg + "' (expected: --flag=value)");
        continue;
      }
      String name = arg.substring(0, eq);
      OptionSpec option = sub.getCommandSpec().findOption(name);
      if (option == null || !List.of(option.names()).contains(name)) {
        problems.add(field + " args[" + i + "]: unknown flag " + name + " for 'portage " + subName + "'");
      } else if (option.hidden()) {
        problems.add(field + " args[" + i + "]: " + name + " is an upstream flag 'portage " + subName
            + "' does not implement (accepted with a WARN, or refused)");
      }
    }
    if (problems.size() > before) {
      return null;
    }
    CommandSpec spec;
    try {
      spec = top.parseArgs(args.toArray(String[]::new)).subcommand().commandSpec();
    } catch (CommandLine.ParameterException e) {
      problems.add(field + " args: 'portage " + subName + "' rejects them: " + e.getMessage());
      return null;
    }
    String configProblem = toConfigProblem(spec.userObject());
    if (configProblem != null) {
      problems.add(field + " args: 'portage " + subName + "' refuses this combination: " + configProblem);
      return null;
    }
    Function<String, Object> flag = n -> spec.findOption(n) == null ? null : spec.findOption(n).getValue();
    List<Open> listeners = new ArrayList<>();
    for (ListenerFlags.Listener l : ListenerFlags.BY_SUBCOMMAND.getOrDefault(subName, List.of())) {
      Object port = flag.apply(l.portFlag());
      Object bind = flag.apply(l.bindFlag());
      if (l.portFlag().equals(l.bindFlag()) && port instanceof String hostPort) { // kube-proxy's host:port
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0 || !hostPort.substring(colon + 1).matches("\\d+")) {
          continue;
        }
        port = Integer.parseInt(hostPort.substring(colon + 1));
        bind = hostPort.substring(0, colon);
      }
      if (!(port instanceof Integer p) || p <= 0 || (l.onlyWith() != null && flag.apply(l.onlyWith()) == null)) {
        continue;
      }
      listeners.add(new Open(l.portFlag(), p, l.bindFlag(), bind == null ? "" : bind.toString()));
    }
    Map<String, Integer> named = new LinkedHashMap<>();
    JsonNode ports = c.path("ports");
    for (int j = 0; j < ports.size(); j++) {
      JsonNode p = ports.get(j);
      int number = p.path("containerPort").asInt(-1);
      if (p.has("name")) {
        named.put(p.path("name").asText(), number);
      }
      Open open = listeners.stream().filter(o -> o.port() == number).findFirst().orElse(null);
      String pf = field + " ports[" + j + "]: containerPort " + number;
      if (open == null) {
        problems.add(pf + " is not a port 'portage " + subName + "' listens on with these args (listeners: " + listeners + ")");
      } else if (open.loopback() && !hostNetwork) {
        problems.add(pf + " is " + open + " (" + open.bindFlag() + "): unreachable from outside the pod");
      }
    }
    PortageContainer container = new PortageContainer(c.path("name").asText(), listeners, named);
    for (String probe : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
      if (c.has(probe)) {
        checkProbe(field + " " + probe, c.path(probe), container, hostNetwork, subName);
      }
    }
    List<RbacNeed> needs = RbacNeed.of(subName, flag, this::pluralOf, problems, field);
    for (RbacNeed need : needs) {
      if (!granted(doc.namespace() + "/" + sa, need)) {
        problems.add(field + ": service account " + doc.namespace() + "/" + sa + " may not " + need.describe()
            + " (needed by " + need.reason() + ")");
      }
    }
    return container;
  }

  /** The arg as the process receives it: {@code $(VAR)} replaced as the kubelet would, with sample values. */
  private String expand(String field, String arg, JsonNode env) {
    Matcher m = VAR_REF.matcher(arg);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String name = m.group(1);
      String value = KUBELET_ENV.get(name);
      for (JsonNode e : env) {
        if (e.path("name").asText().equals(name)) {
          value = e.has("value") ? e.path("value").asText()
              : FIELD_SAMPLES.getOrDefault(e.path("valueFrom").path("fieldRef").path("fieldPath").asText(), "sample-" + name);
        }
      }
      if (value == null) {
        problems.add(field + ": $(" + name + ") is not in the container's env (the kubelet would pass it on unexpanded)");
        value = m.group();
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** Runs the subcommand's package-private {@code toConfig()}: the cross-flag rules the process applies at startup. */
  private static String toConfigProblem(Object command) {
    Method toConfig;
    try {
      toConfig = command.getClass().getDeclaredMethod("toConfig");
    } catch (NoSuchMethodException e) {
      return null; // quickstart has no separate configuration step
    }
    try {
      toConfig.setAccessible(true);
      toConfig.invoke(command);
      return null;
    } catch (InvocationTargetException e) {
      return e.getCause().getMessage();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  private void checkProbe(String field, JsonNode probe, PortageContainer container, boolean hostNetwork, String sub) {
    JsonNode handler = probe.has("httpGet") ? probe.path("httpGet")
        : probe.has("tcpSocket") ? probe.path("tcpSocket") : probe.path("grpc");
    JsonNode portNode = handler.path("port");
    int port;
    if (portNode.isTextual() && !portNode.asText().chars().allMatch(Character::isDigit)) {
      Integer resolved = container.namedPorts().get(portNode.asText());
      if (resolved == null) {
        problems.add(field + ".port: '" + portNode.asText() + "' names no port of this container (names: "
            + container.namedPorts().keySet() + ")");
        return;
      }
      port = resolved;
    } else {
      port = portNode.asInt(-1);
    }
    Open open = container.listenerOn(port);
    if (open == null) {
      problems.add(field + ".port: " + port + " is not a port 'portage " + sub + "' listens on with these args (listeners: "
          + container.listeners() + ")");
      return;
    }
    if (open.loopback()) {
      String host = handler.path("host").asText("");
      if (!hostNetwork) {
        problems.add(field + ".port: " + port + " is " + open + ": the kubelet probes the pod IP and cannot reach it (set "
            + open.bindFlag() + "=0.0.0.0)");
      } else if (!ListenerFlags.isLoopback(host)) {
        problems.add(field + ".host: '" + host + "' but " + open + " listens on the node's loopback only (expected: host: 127.0.0.1)");
      }
    }
  }

  private String pluralOf(String kind) {
    String builtin = BUILTIN_KINDS.get(kind);
    return builtin != null ? builtin : crdKinds.get(kind);
  }

  private boolean granted(String serviceAccount, RbacNeed need) {
    for (Grant g : grants.getOrDefault(serviceAccount, List.of())) {
      if (g.namespace() != null && !g.namespace().equals(need.namespace())) {
        continue;
      }
      for (JsonNode rule : g.rules()) {
        if (matches(rule.path("apiGroups"), need.group()) && matches(rule.path("resources"), need.resource())
            && matches(rule.path("verbs"), need.verb())) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean matches(JsonNode list, String value) {
    for (JsonNode v : list) {
      if (v.asText().equals(value) || v.asText().equals("*")) {
        return true;
      }
    }
    return false;
  }

  private void checkServices() {
    for (ManifestDoc svc : set.ofKind("Service")) {
      JsonNode selectorNode = svc.node().path("spec").path("selector");
      if (selectorNode.isEmpty()) {
        continue; // endpoints managed elsewhere
      }
      Map<String, String> selector = new LinkedHashMap<>();
      selectorNode.fields().forEachRemaining(e -> selector.put(e.getKey(), e.getValue().asText()));
      List<Workload> selected = workloads.stream()
          .filter(w -> w.doc().namespace().equals(svc.namespace()))
          .filter(w -> w.labels().entrySet().containsAll(selector.entrySet()))
          .toList();
      if (selected.isEmpty()) {
        problems.add(svc.where() + " spec.selector: " + selector + " selects no workload in deploy/");
        continue;
      }
      JsonNode ports = svc.node().path("spec").path("ports");
      for (int j = 0; j < ports.size(); j++) {
        JsonNode p = ports.get(j);
        JsonNode target = p.has("targetPort") ? p.path("targetPort") : p.path("port");
        String field = svc.where() + " spec.ports[" + j + "].targetPort: " + target.asText();
        for (Workload w : selected) {
          checkTarget(field, target, w);
        }
      }
    }
  }

  private void checkTarget(String field, JsonNode target, Workload w) {
    if (w.argsBroken()) {
      return; // its args are already reported; its listeners are unknown
    }
    boolean named = target.isTextual() && !target.asText().chars().allMatch(Character::isDigit);
    List<Open> all = new ArrayList<>();
    for (PortageContainer c : w.containers()) {
      Integer number = named ? c.namedPorts().get(target.asText()) : Integer.valueOf(target.asInt());
      all.addAll(c.listeners());
      Open open = number == null ? null : c.listenerOn(number);
      if (open != null) {
        if (open.loopback() && !w.hostNetwork()) {
          problems.add(field + " is " + open + " in " + w.doc().where() + ": unreachable through a Service");
        }
        return;
      }
    }
    problems.add(field + (named ? " names no container port" : " is not a port") + " of the Portage containers in "
        + w.doc().where() + " (listeners: " + all + ")");
  }
}
