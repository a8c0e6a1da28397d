package dev.portage.hub.cache;

import java.util.Objects;

/**
 * One resource as cached for one component: the directory {@code {component}/{resource}[.{version}.{group}]}
 * that lists and list metadata live in. Immutable.
 */
public record ResourceRef(String component, String resource, String version, String group) {

  public ResourceRef {
    Objects.requireNonNull(component, "component");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(group, "group");
  }

  /** The key of one object of this resource. */
  public CacheKey key(String namespace, String name) {
    return new CacheKey(component, resource, version, group, namespace, name);
  }

  /** See {@link CacheKey#resourceDir()}. */
  public String resourceDir() {
    return CacheKey.resourceDir(resource, version, group);
  }

  @Override
  public String toString() {
    return component + "/" + resourceDir();
  }
}
