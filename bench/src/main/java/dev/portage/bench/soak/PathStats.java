package dev.portage.bench.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Outcomes of one request path: attempts, successes, verified bytes, checksum mismatches, and every
 * failure with its time span (classified against the fault windows only at the end, since a window's
 * end is known only once its target recovered). Thread-safe; the workers of a path share one.
 */
final class PathStats {
  /** Failures kept in full; beyond this only counted (a broken component must not fill the heap). */
  private static final int MAX_KEPT = 200_000;

  /** A failed request: when it ran (ns since the soak started), whether it hit its timeout, why. */
  record Failure(long startNanos, long endNanos, boolean timeout, String reason) {}

  final Traffic traffic;
  private final AtomicLong attempted = new AtomicLong();
  private final AtomicLong succeeded = new AtomicLong();
  private final AtomicLong bytesVerified = new AtomicLong();
  private final AtomicLong mismatches = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final List<Failure> failures = new ArrayList<>();
  private final List<String> mismatchReasons = new ArrayList<>();

  PathStats(Traffic traffic) {
    this.traffic = traffic;
  }

  void attempt() {
    attempted.incrementAndGet();
  }

  void success(long verifiedBytes) {
    succeeded.incrementAndGet();
    bytesVerified.addAndGet(verifiedBytes);
  }

  /** A completed transfer whose bytes differ from what was sent: always a FAIL of the soak. */
  synchronized void mismatch(long startNanos, long endNanos, String reason) {
    mismatches.incrementAndGet();
    if (mismatchReasons.size() < 20) {
      mismatchReasons.add(reason);
    }
    failure(startNanos, endNanos, false, "checksum mismatch: " + reason);
  }

  synchronized void failure(long startNanos, long endNanos, boolean timeout, String reason) {
    if (failures.size() < MAX_KEPT) {
      failures.add(new Failure(startNanos, endNanos, timeout, reason));
    } else {
      dropped.incrementAndGet();
    }
  }

  long attempted() {
    return attempted.get();
  }

  long succeeded() {
    return succeeded.get();
  }

  long bytesVerified() {
    return bytesVerified.get();
  }

  long mismatches() {
    return mismatches.get();
  }

  long droppedFailures() {
    return dropped.get();
  }

  synchronized List<Failure> failures() {
    return List.copyOf(failures);
  }

  synchronized List<String> mismatchReasons() {
    return List.copyOf(mismatchReasons);
  }
}
