package dev.portage.hub.remote;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps the cache writer from falling behind without bound. Bodies of get and list answers wait for
 * the single writer thread; their bytes are reserved here and refused above a limit (the answer is
 * still relayed, only not cached). And an answer identical to the last one stored for the same
 * request (same component, path and query; keys compare by value) is not queued at all: a kubelet re-listing an unchanged
 * list of 1,000 pods costs a checksum, not 1,000 file reads. Thread-safe.
 */
final class CacheBacklog {

  /** Requests whose last stored answer is remembered; beyond this the memory is simply cleared. */
  private static final int MAX_REMEMBERED = 4096;

  private final long maxBytes;
  private final AtomicLong pending = new AtomicLong();
  private final Map<Object, Long> lastStored = new ConcurrentHashMap<>();
  private final LongAdder refused = new LongAdder();

  CacheBacklog(long maxBytes) {
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("maxBytes: " + maxBytes + " (expected: > 0)");
    }
    this.maxBytes = maxBytes;
  }

  /** Reserves room for a body of {@code bytes}; false (and counted) when the backlog is full. */
  boolean tryReserve(int bytes) {
    long after = pending.addAndGet(bytes);
    if (after > maxBytes && after != bytes) { // one body alone may always wait
      pending.addAndGet(-bytes);
      refused.increment();
      return false;
    }
    return true;
  }

  /** The writer is done with a body reserved by {@link #tryReserve}. */
  void release(int bytes) {
    pending.addAndGet(-bytes);
  }

  /** Bytes waiting for the writer now. */
  long pendingBytes() {
    return pending.get();
  }

  /** Bodies refused because the backlog was full. */
  long refused() {
    return refused.sum();
  }

  /** A fingerprint from a body's CRC32C (computed as it streamed) and its length. */
  static long fingerprint(long crc32c, int length) {
    return crc32c << 32 ^ length;
  }

  /** Whether {@code fingerprint} is what was last stored, or queued to be, for {@code request}. */
  boolean isUnchanged(Object request, long fingerprint) {
    Long last = lastStored.get(request);
    return last != null && last == fingerprint;
  }

  /** Records that the answer with {@code fingerprint} is queued or stored for {@code request}. */
  void stored(Object request, long fingerprint) {
    if (lastStored.size() >= MAX_REMEMBERED) {
      lastStored.clear();
    }
    lastStored.put(request, fingerprint);
  }

  /**
   * Forgets {@code fingerprint} for {@code request} unless a newer answer has been recorded since
   * (its write failed, or it was not stored).
   */
  void forget(Object request, long fingerprint) {
    lastStored.remove(request, fingerprint);
  }
}
