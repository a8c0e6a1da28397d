package dev.portage.hub.proxy;

import java.util.ArrayList;
import java.util.List;

/**
 * The strings node components send in nearly every request: API path segments ({@code api}, {@code
 * v1}, {@code namespaces}, {@code pods}, well-known namespaces and groups) and the components named
 * by their User-Agent. A request's resolve takes these shared instances instead of cutting a new
 * String out of the request line for each segment. Immutable; thread-safe.
 */
final class CommonSegments {

  private static final String[] WORDS = {
    // path prefixes, versions, verbs in the path
    "api", "apis", "v1", "v1beta1", "v1beta2", "v2", "v2beta1", "v2beta2", "watch", "proxy",
    // namespaces
    "namespaces", "default", "kube-system", "kube-public", "kube-node-lease", "kube-flannel",
    // groups
    "apps", "batch", "policy", "autoscaling", "coordination.k8s.io", "discovery.k8s.io",
    "networking.k8s.io", "node.k8s.io", "storage.k8s.io", "rbac.authorization.k8s.io",
    "apiextensions.k8s.io", "apps.openyurt.io", "certificates.k8s.io", "events.k8s.io",
    "authentication.k8s.io", "authorization.k8s.io", "flowcontrol.apiserver.k8s.io",
    // resources and subresources
    "pods", "nodes", "services", "endpoints", "endpointslices", "configmaps", "secrets", "events",
    "leases", "serviceaccounts", "persistentvolumes", "persistentvolumeclaims", "csinodes",
    "csidrivers", "runtimeclasses", "storageclasses", "volumeattachments", "ingresses",
    "ingressclasses", "networkpolicies", "deployments", "replicasets", "daemonsets",
    "statefulsets", "jobs", "cronjobs", "customresourcedefinitions", "certificatesigningrequests",
    "status", "log", "exec", "attach", "portforward", "binding", "eviction", "token",
    "ephemeralcontainers", "finalize", "scale",
    // components (User-Agent up to the first "/")
    "kubelet", "kube-proxy", "coredns", "flanneld", "kubectl", "yurthub", "yurt-hub",
    "kube-controller-manager", "kube-scheduler",
  };

  /** {@code WORDS} by length: each bucket holds the words of that many chars. */
  private static final String[][] BY_LENGTH = byLength();

  private CommonSegments() {}

  /** The shared string equal to {@code s.substring(from, to)}, or null when it is not common. */
  static String lookup(String s, int from, int to) {
    int n = to - from;
    if (n <= 0 || n >= BY_LENGTH.length) {
      return null;
    }
    for (String word : BY_LENGTH[n]) {
      if (s.regionMatches(from, word, 0, n)) {
        return word;
      }
    }
    return null;
  }

  private static String[][] byLength() {
    int max = 0;
    for (String w : WORDS) {
      max = Math.max(max, w.length());
    }
    List<List<String>> buckets = new ArrayList<>();
    for (int i = 0; i <= max; i++) {
      buckets.add(new ArrayList<>());
    }
    for (String w : WORDS) {
      buckets.get(w.length()).add(w);
    }
    String[][] out = new String[max + 1][];
    for (int i = 0; i <= max; i++) {
      out[i] = buckets.get(i).toArray(String[]::new);
    }
    return out;
  }
}
