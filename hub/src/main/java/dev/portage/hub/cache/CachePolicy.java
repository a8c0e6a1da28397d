package dev.portage.hub.cache;

import dev.portage.hub.proxy.RequestInfo;
import java.util.Objects;
import java.util.Set;

/**
 * Decides which requests' responses go to the cache: resource requests of a cached component, not
 * delete/deletecollection/proxy, no subresource other than {@code status}, not
 * CertificateSigningRequests or SubjectAccessReviews (YurtHub's rules). The components given at
 * construction are fixed; more may be added at runtime ({@link #setAddedComponents}, from the
 * {@code yurt-hub-cfg} ConfigMap). Thread-safe: the added set is swapped atomically.
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

  /** Caches nothing: a hub that only proxies (YurtHub's cloud working mode). */
  public static final CachePolicy NONE = new CachePolicy(Set.of());

  private final Set<String> components;
  private final boolean all;
  private volatile Set<String> added = Set.of();

  /**
   * @param components components whose responses are cached; {@code "*"} caches every component
   *     that sends a User-Agent
   */
  public CachePolicy(Set<String> components) {
    this.components = Set.copyOf(Objects.requireNonNull(components, "components"));
    this.all = this.components.contains("*");
  }

  /** Whether any component is cached (else nothing is ever answered from a cache). */
  public boolean cachesAnything() {
    return !components.isEmpty();
  }

  /** Whether {@code component} is cached at all (its cache may answer when the cloud is down). */
  public boolean cachesComponent(String component) {
    if (component.isEmpty()) {
      return false;
    }
    Set<String> more = added;
    return all || components.contains(component) || more.contains(component) || more.contains("*");
  }

  /**
   * Replaces the components added at runtime ({@code *} for all); returns whether they changed.
   * Ignored by a policy that caches nothing ({@link #NONE}).
   */
  public boolean setAddedComponents(Set<String> components) {
    Set<String> next = Set.copyOf(components);
    if (!cachesAnything() || next.equals(added)) {
      return false;
    }
    added = next;
    return true;
  }

  /** The components added at runtime. */
  public Set<String> addedComponents() {
    return added;
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
