package dev.portage.hub.cache;

import java.util.Objects;

/**
 * Names one cached object: {@code {component}/{resource}[.{version}.{group}]/{namespace}/{name}}.
 * Any string is allowed in every part; {@link DiskCache} encodes them so that no value can leave the
 * cache directory. Immutable.
 *
 * @param component the client that read the object (kubelet, kube-proxy...)
 * @param resource plural resource name, e.g. {@code pods}
 * @param version API version, e.g. {@code v1}
 * @param group API group, "" for the core group
 * @param namespace "" for cluster-scoped objects
 * @param name the object name
 */
public record CacheKey(
    String component, String resource, String version, String group, String namespace, String name) {

  public CacheKey {
    requireNonEmpty(component, "component");
    requireNonEmpty(resource, "resource");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(namespace, "namespace");
    requireNonEmpty(name, "name");
  }

  /** The resource directory name: {@code pods} for the core group, {@code deployments.v1.apps}. */
  public String resourceDir() {
    return resourceDir(resource, version, group);
  }

  static String resourceDir(String resource, String version, String group) {
    return group.isEmpty() ? resource : resource + "." + version + "." + group;
  }

  private static void requireNonEmpty(String value, String what) {
    Objects.requireNonNull(value, what);
    if (value.isEmpty()) {
      throw new IllegalArgumentException(what + ": \"\" (expected: non-empty)");
    }
  }

  @Override
  public String toString() {
    return component + "/" + resourceDir() + "/" + (namespace.isEmpty() ? "" : namespace + "/")
        + name;
  }
}
