package dev.portage.hub.proxy;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a request to the Kubernetes API asks for, resolved from its method, path, query and
 * User-Agent before it is routed (the apiserver's {@code RequestInfo} plus the calling component).
 * Immutable.
 *
 * @param verb get, list, watch, create, update, patch, delete, deletecollection, proxy; for
 *     non-resource requests the lower-case HTTP method
 * @param resourceRequest whether the path names a resource ({@code /api/v1/...}, {@code
 *     /apis/g/v/...}); discovery, {@code /version}, {@code /healthz} are not
 * @param path the request path without the query
 * @param apiGroup "" for the core group
 * @param apiVersion e.g. {@code v1}; "" for non-resource requests
 * @param namespace "" for cluster-scoped resources and lists across all namespaces
 * @param resource e.g. {@code pods}; "" for non-resource requests
 * @param subresource e.g. {@code status}, {@code log}; "" when none
 * @param name "" for collections
 * @param component the User-Agent up to the first "/" ({@code kubelet}, {@code kube-proxy}); "" when
 *     the request has none
 * @param parameters decoded query parameters
 */
public record RequestInfo(
    String verb,
    boolean resourceRequest,
    String path,
    String apiGroup,
    String apiVersion,
    String namespace,
    String resource,
    String subresource,
    String name,
    String component,
    Map<String, List<String>> parameters) {

  public RequestInfo {
    Objects.requireNonNull(verb, "verb");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(apiGroup, "apiGroup");
    Objects.requireNonNull(apiVersion, "apiVersion");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(subresource, "subresource");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(component, "component");
    parameters = Map.copyOf(Objects.requireNonNull(parameters, "parameters"));
  }

  /** Whether this is a watch: such requests stay open and are not counted in flight. */
  public boolean isWatch() {
    return "watch".equals(verb);
  }

  /** The first value of query parameter {@code key}, or {@code ""}. */
  public String parameter(String key) {
    List<String> values = parameters.get(key);
    return values == null || values.isEmpty() ? "" : values.get(0);
  }

  /** {@code group/version} as in {@code apiVersion} fields: {@code v1}, {@code apps/v1}. */
  public String groupVersion() {
    return apiGroup.isEmpty() ? apiVersion : apiGroup + "/" + apiVersion;
  }

  /**
   * From the path, verb and component only (equal requests still hash alike): their strings keep
   * their hashes, so a shared instance ({@link RequestInfoCache}) hashes in a few loads, where the
   * generated hash of all eleven components (the query's map among them) showed in profiles of the
   * cache backlog's lookup. Requests differing only in their query share a hash and compare unequal.
   */
  @Override
  public int hashCode() {
    return (path.hashCode() * 31 + verb.hashCode()) * 31 + component.hashCode();
  }

  @Override
  public String toString() {
    if (!resourceRequest) {
      return component + " " + verb + " " + path;
    }
    StringBuilder b = new StringBuilder(component).append(' ').append(verb).append(' ');
    b.append(resource);
    if (!apiGroup.isEmpty()) {
      b.append('.').append(apiGroup);
    }
    if (!subresource.isEmpty()) {
      b.append('/').append(subresource);
    }
    if (!namespace.isEmpty()) {
      b.append(" ns=").append(namespace);
    }
    if (!name.isEmpty()) {
      b.append(" name=").append(name);
    }
    return b.toString();
  }
}
