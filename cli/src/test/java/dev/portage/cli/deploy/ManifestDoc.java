package dev.portage.cli.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;

/**
 * One YAML document of a manifest file.
 *
 * @param file path relative to the repository root, as problems name it
 * @param index 1-based position of the document in its file
 */
record ManifestDoc(Path file, int index, JsonNode node) {

  String kind() {
    return node.path("kind").asText("");
  }

  String name() {
    return node.path("metadata").path("name").asText("");
  }

  /** The namespace, "default" when a namespaced object does not say. */
  String namespace() {
    return node.path("metadata").path("namespace").asText("default");
  }

  /**
   * "deploy/x.yaml (doc 2, Deployment kube-system/foo)", or "(doc 1, ClusterRole foo)" for an object
   * without a namespace: the prefix of every problem about this document.
   */
  String where() {
    boolean namespaced = node.path("metadata").has("namespace");
    return file + " (doc " + index + ", " + kind() + " " + (namespaced ? namespace() + "/" : "") + name() + ")";
  }
}
