package dev.portage.hub.cache;

import dev.portage.hub.proxy.RequestInfo;
import java.util.Objects;
import java.util.Set;

/**
 * Decides which requests' responses go to the cache: resource requests of a cached component, not
 * delete/deletecollection/proxy, no subresource other than {@code status}, not
 * CertificateSigningRequests or SubjectAccessReviews (YurtHub's rules). Immutable.
 */
public final class CachePolicy {

  /** YurtHub's default cached components. */
  public static final Set<String> DEFAULT_COMPONENTS =
      Set.of("kubelet", "kube-proxy", "flanneld", "coredns");

  private static final Set<String> VERBS = Set.of("get", "list", "watch", "create", "update", "patch");
  private static final Set<String> NEVER =
      Set.of(
          "certificatesigningrequests",
          "subjectaccessreviews",
          "selfsubjectaccessreviews",
          "localsubjectaccessreviews",
          "selfsubjectrulesreviews",
          "tokenreviews");

  private final Set<String> components;
  private final boolean all;

  /**
   * @param components components whose responses are cached; {@code "*"} caches every component
   *     that sends a User-Agent
   */
  public CachePolicy(Set<String> components) {
    this.components = Set.copyOf(Objects.requireNonNull(components, "components"));
    this.all = this.components.contains("*");
  }

  /** Whether {@code component} is cached at all (its cache may answer when the cloud is down). */
  public boolean cachesComponent(String component) {
    return !component.isEmpty() && (all || components.contains(component));
  }

  /** Whether a 2xx response to {@code info} is copied into the cache. */
  public boolean isCacheable(RequestInfo info) {
    return info.resourceRequest()
        && cachesComponent(info.component())
        && VERBS.contains(info.verb())
        && (info.subresource().isEmpty() || info.subresource().equals("status"))
        && !NEVER.contains(info.resource());
  }
}
