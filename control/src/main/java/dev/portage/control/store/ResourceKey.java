package dev.portage.control.store;

import java.util.Objects;

/**
 * Identity of one stored object: its kind ({@code group/version/Kind}, e.g.
 * {@code dubbo.apache.org/v1alpha1/TagRoute}, {@code v1/Service},
 * {@code discovery.k8s.io/v1/EndpointSlice}), namespace ("" for cluster-scoped) and name.
 */
public record ResourceKey(String kind, String namespace, String name) implements Comparable<ResourceKey> {

  public ResourceKey {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    if (kind.isEmpty() || name.isEmpty()) {
      throw new IllegalArgumentException("kind and name must be non-empty: " + kind + " " + name);
    }
  }

  @Override
  public int compareTo(ResourceKey o) {
    int c = kind.compareTo(o.kind);
    if (c == 0) {
      c = namespace.compareTo(o.namespace);
    }
    return c != 0 ? c : name.compareTo(o.name);
  }

  @Override
  public String toString() {
    return kind + " " + (namespace.isEmpty() ? "" : namespace + "/") + name;
  }
}
