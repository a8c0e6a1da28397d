package dev.portage.control.source.kubernetes;

/**
 * Turns Kubernetes resourceVersions into store revision hints. Kubernetes documents them as opaque,
 * but every API server backed by etcd hands out the etcd modification revision, a growing integer:
 * using it as the hint makes store revisions follow the cluster and survive a control-plane restart.
 */
final class ResourceVersions {

  private ResourceVersions() {}

  /** The resourceVersion as a number, or 0 when it is missing or not a non-negative integer. */
  static long hint(String resourceVersion) {
    if (resourceVersion == null || resourceVersion.isEmpty() || resourceVersion.length() > 18) {
      return 0;
    }
    long v = 0;
    for (int i = 0; i < resourceVersion.length(); i++) {
      char c = resourceVersion.charAt(i);
      if (c < '0' || c > '9') {
        return 0;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
