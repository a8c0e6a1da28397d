package dev.portage.control.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * One stored object: its key, the store revision at which it last changed, the source's own version
 * (a Kubernetes resourceVersion, or a file digest), and the whole object as a JSON tree in Kubernetes
 * shape ({@code apiVersion}, {@code kind}, {@code metadata}, {@code spec}, ...). Immutable: never
 * mutate {@code body}; the store hands the same tree to every reader.
 */
public record Resource(ResourceKey key, long revision, String sourceVersion, JsonNode body) {

  public Resource {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(sourceVersion, "sourceVersion");
    Objects.requireNonNull(body, "body");
  }

  /** The {@code spec} of the object, or a missing node. */
  public JsonNode spec() {
    return body.path("spec");
  }
}
