package dev.portage.hub.cache;

/**
 * Orders resourceVersions. They are opaque to clients, but every apiserver backed by etcd uses the
 * etcd revision, a decimal integer; like YurtHub, the hub compares them as numbers and treats a
 * value that is not a number as unordered (the newer write wins).
 */
final class ResourceVersions {

  private ResourceVersions() {}

  /** Whether {@code candidate} is strictly older than {@code held}, so it must not replace it. */
  static boolean isOlder(String candidate, String held) {
    long c = parse(candidate);
    long h = parse(held);
    return c >= 0 && h >= 0 && c < h;
  }

  /** Whether {@code a} is at most {@code b}; false when either is not a number. */
  static boolean notNewer(String a, String b) {
    long x = parse(a);
    long y = parse(b);
    return x >= 0 && y >= 0 && x <= y;
  }

  private static long parse(String rv) {
    if (rv == null || rv.isEmpty() || rv.length() > 19) {
      return -1;
    }
    for (int i = 0; i < rv.length(); i++) {
      if (rv.charAt(i) < '0' || rv.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(rv);
  }
}
