package dev.portage.hub.cache;

import dev.portage.hub.proxy.RequestInfo;
import java.util.Objects;

/**
 * What the hub caches for node-level clients, from its {@code --node-name}: the kubelet of this
 * node reads its own Node and its own Lease in {@code kube-node-lease}, and the hub keeps only
 * those (a kubelet-named client reading other nodes' objects does not fill this node's cache with
 * them, and they are not served offline as this node's). Other components (kube-proxy, flanneld,
 * coredns read every node or service) and other resources are not narrowed. Without a node name
 * nothing is narrowed. Immutable.
 */
public final class CacheScope {

  /** No node name: every cacheable object is cached. */
  public static final CacheScope UNSCOPED = new CacheScope("");

  /** The namespace of node heartbeat Leases. */
  public static final String NODE_LEASE_NAMESPACE = "kube-node-lease";

  private final String nodeName;

  private CacheScope(String nodeName) {
    this.nodeName = nodeName;
  }

  /** The scope of the hub on node {@code nodeName} ("" for none). */
  public static CacheScope forNode(String nodeName) {
    Objects.requireNonNull(nodeName, "nodeName");
    return nodeName.isEmpty() ? UNSCOPED : new CacheScope(nodeName);
  }

  /** The node this hub runs on; "" when not known. */
  public String nodeName() {
    return nodeName;
  }

  /** Whether {@code info} reads or writes this node's own Node object (or its status). */
  public boolean isOwnNode(RequestInfo info) {
    return !nodeName.isEmpty() && info.apiGroup().isEmpty() && info.resource().equals("nodes")
        && info.name().equals(nodeName);
  }

  /** Whether {@code info} reads or writes this node's own heartbeat Lease. */
  public boolean isOwnLease(RequestInfo info) {
    return !nodeName.isEmpty() && isNodeLease(info, info.namespace())
        && info.name().equals(nodeName);
  }

  /** Whether the object {@code namespace/name} read by {@code info} belongs in the cache. */
  public boolean admits(RequestInfo info, String namespace, String name) {
    if (nodeName.isEmpty() || !info.component().equals("kubelet")) {
      return true;
    }
    if ((info.apiGroup().isEmpty() && info.resource().equals("nodes"))
        || isNodeLease(info, namespace)) {
      return name.equals(nodeName);
    }
    return true;
  }

  private static boolean isNodeLease(RequestInfo info, String namespace) {
    return info.apiGroup().equals("coordination.k8s.io") && info.resource().equals("leases")
        && namespace.equals(NODE_LEASE_NAMESPACE);
  }

  @Override
  public String toString() {
    return nodeName.isEmpty() ? "unscoped" : "node " + nodeName;
  }
}
