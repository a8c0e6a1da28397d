package dev.portage.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.portage.core.time.GoDurations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy's {@code --config} file: a {@code KubeProxyConfiguration}
 * ({@code kubeproxy.config.k8s.io/v1alpha1}) in YAML or JSON. The fields Portage implements override
 * the matching flags, as in kube-proxy (except {@code --hostname-override} given on the command
 * line, which wins); the other fields present are named in one WARN line.
 */
final class KubeProxyConfigFile {

  private static final Logger log = LoggerFactory.getLogger(KubeProxyConfigFile.class);
  /** Top-level fields applied; "nftables"/"iptables" sub-fields are checked one by one. */
  private static final Set<String> APPLIED = Set.of("apiVersion", "kind", "mode", "hostnameOverride",
      "clusterCIDR", "nodePortAddresses", "healthzBindAddress", "metricsBindAddress", "bindAddress",
      "clientConnection", "nftables", "iptables");
  private static final Set<String> SYNC_FIELDS = Set.of("masqueradeAll", "masqueradeBit", "syncPeriod", "minSyncPeriod");

  private final JsonNode root;
  private final Path file;

  private KubeProxyConfigFile(Path file, JsonNode root) {
    this.file = file;
    this.root = root;
  }

  /**
   * Reads and checks {@code file}.
   *
   * @throws IOException if it cannot be read or parsed
   * @throws IllegalArgumentException if it is not a KubeProxyConfiguration
   */
  static KubeProxyConfigFile read(Path file) throws IOException {
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(file));
    } catch (IOException e) {
      throw new IOException("--config " + file + ": " + e.getMessage(), e);
    }
    if (root == null || !root.isObject() || !"KubeProxyConfiguration".equals(root.path("kind").asText())) {
      throw new IllegalArgumentException("--config " + file + ": not a KubeProxyConfiguration (kind: "
          + (root == null ? "none" : root.path("kind").asText("none")) + ")");
    }
    String apiVersion = root.path("apiVersion").asText("");
    if (!apiVersion.startsWith("kubeproxy.config.k8s.io/")) {
      throw new IllegalArgumentException("--config " + file + ": apiVersion " + apiVersion
          + " (expected: kubeproxy.config.k8s.io/v1alpha1)");
    }
    return new KubeProxyConfigFile(file, root);
  }

  /** Overrides {@code command}'s flags with the file's fields. */
  void applyTo(ServiceProxyCommand command) {
    text("mode").ifPresent(v -> command.proxyMode = v);
    if (command.hostnameOverride == null) {
      text("hostnameOverride").ifPresent(v -> command.hostnameOverride = v);
    }
    text("clusterCIDR").ifPresent(v -> command.clusterCidr = v.split(",")[0]);
    text("healthzBindAddress").ifPresent(v -> command.healthzBindAddress = v);
    text("metricsBindAddress").ifPresent(v -> command.metricsBindAddress = v);
    JsonNode kubeconfig = root.path("clientConnection").path("kubeconfig");
    if (kubeconfig.isTextual() && !kubeconfig.asText().isEmpty()) {
      command.kubeconfig = Path.of(kubeconfig.asText());
      command.kubernetes = true;
    } else if (command.endpointsFile == null && command.destinationAddr == null) {
      command.kubernetes = true; // kube-proxy always reads the cluster: in-cluster config
    }
    JsonNode nodePorts = root.path("nodePortAddresses");
    if (nodePorts.isArray()) {
      List<String> cidrs = new ArrayList<>();
      nodePorts.forEach(n -> cidrs.add(n.asText()));
      command.nodePortAddresses = cidrs;
    }
    // nftables mode reads "nftables"; older files put the same settings under "iptables".
    for (String section : List.of("iptables", "nftables")) {
      JsonNode s = root.path(section);
      if (s.path("masqueradeAll").isBoolean()) {
        command.masqueradeAll = s.path("masqueradeAll").asBoolean();
      }
      if (s.path("masqueradeBit").isInt()) {
        command.masqueradeBit = s.path("masqueradeBit").asInt();
      }
      if (s.path("syncPeriod").isTextual()) {
        command.syncPeriod = GoDurations.parse(s.path("syncPeriod").asText());
      }
      if (s.path("minSyncPeriod").isTextual()) {
        command.minSyncPeriod = GoDurations.parse(s.path("minSyncPeriod").asText());
      }
    }
    List<String> ignored = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      if (!APPLIED.contains(field.getKey())) {
        ignored.add(field.getKey());
      } else if (field.getKey().equals("nftables") || field.getKey().equals("iptables")) {
        field.getValue().fieldNames().forEachRemaining(name -> {
          if (!SYNC_FIELDS.contains(name)) {
            ignored.add(field.getKey() + "." + name);
          }
        });
      } else if (field.getKey().equals("clientConnection")) {
        field.getValue().fieldNames().forEachRemaining(name -> {
          if (!name.equals("kubeconfig")) {
            ignored.add("clientConnection." + name);
          }
        });
      }
    }
    if (!ignored.isEmpty()) {
      log.warn("--config {}: fields without effect in Portage: {}", file, String.join(", ", ignored));
    }
  }

  private java.util.Optional<String> text(String field) {
    JsonNode node = root.path(field);
    return node.isTextual() ? java.util.Optional.of(node.asText()) : java.util.Optional.empty();
  }
}
