package dev.portage.core.balance;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Uniform random choice among the ready endpoints of a snapshot ({@link Endpoint#isReady()}). It
 * first draws over the whole list and rejects draws that are not ready (exactly uniform among the
 * ready ones, and O(1) when most are ready); after a few rejections it counts the ready endpoints and
 * draws among them, so a mostly unready set costs one scan instead of a long loop.
 */
final class ReadySampler {

  private static final int MAX_REJECTIONS = 4;

  private ReadySampler() {}

  /**
   * A random index of a ready endpoint other than {@code exclude} (pass -1 to exclude none), or -1
   * if there is none. With {@code exclude} set the draw is {@code b = rand[0, n-1); b += 1 if b >=
   * exclude}, the second draw of power of two choices.
   */
  static int readyIndex(List<? extends Endpoint<?>> endpoints, RandomGenerator random, int exclude) {
    int n = endpoints.size();
    int candidates = exclude < 0 ? n : n - 1;
    if (candidates <= 0) {
      return -1;
    }
    for (int attempt = 0; attempt < MAX_REJECTIONS; attempt++) {
      int i = skip(random.nextInt(candidates), exclude);
      if (endpoints.get(i).isReady()) {
        return i;
      }
    }
    int ready = 0;
    for (int i = 0; i < n; i++) {
      if (i != exclude && endpoints.get(i).isReady()) {
        ready++;
      }
    }
    if (ready == 0) {
      return -1;
    }
    int wanted = random.nextInt(ready);
    for (int i = 0; i < n; i++) {
      if (i != exclude && endpoints.get(i).isReady() && wanted-- == 0) {
        return i;
      }
    }
    // Readiness changed between the two scans; any ready endpoint will do.
    for (int i = 0; i < n; i++) {
      if (i != exclude && endpoints.get(i).isReady()) {
        return i;
      }
    }
    return -1;
  }

  private static int skip(int drawn, int exclude) {
    return exclude >= 0 && drawn >= exclude ? drawn + 1 : drawn;
  }
}
