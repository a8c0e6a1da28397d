package dev.portage.control.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * An object as a source reports it, before the store assigns a revision.
 *
 * @param key identity
 * @param sourceVersion the source's own version (Kubernetes resourceVersion, file digest)
 * @param body the whole object in Kubernetes shape; not mutated afterwards
 */
public record SourceObject(ResourceKey key, String sourceVersion, JsonNode body) {

  public SourceObject {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(sourceVersion, "sourceVersion");
    Objects.requireNonNull(body, "body");
  }

  /** Builds one from a Kubernetes-shaped tree, reading apiVersion, kind and metadata. */
  public static SourceObject of(JsonNode body, String sourceVersion) {
    return new SourceObject(keyOf(body), sourceVersion, body);
  }

  /**
   * The key of a Kubernetes-shaped object: {@code apiVersion + "/" + kind}, metadata.namespace,
   * metadata.name.
   *
   * @throws IllegalArgumentException naming the missing field
   */
  public static ResourceKey keyOf(JsonNode body) {
    String apiVersion = body.path("apiVersion").asText("");
    String kind = body.path("kind").asText("");
    String name = body.path("metadata").path("name").asText("");
    if (apiVersion.isEmpty()) {
      throw new IllegalArgumentException("apiVersion: missing (expected: e.g. dubbo.apache.org/v1alpha1)");
    }
    if (kind.isEmpty()) {
      throw new IllegalArgumentException("kind: missing (expected: e.g. TagRoute)");
    }
    if (name.isEmpty()) {
      throw new IllegalArgumentException("metadata.name: missing in " + apiVersion + "/" + kind);
    }
    return new ResourceKey(apiVersion + "/" + kind, body.path("metadata").path("namespace").asText(""), name);
  }
}
