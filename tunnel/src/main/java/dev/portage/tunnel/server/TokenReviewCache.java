package dev.portage.tunnel.server;

import dev.portage.core.time.Ticker;
import io.grpc.Status;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Recent TokenReview answers, keyed by a digest of the token (the tokens themselves are not kept), so
 * agents reconnecting with the same token within {@code ttl} cost no API call. Holds at most {@code
 * capacity} entries, evicting the least recently used. Thread-safe (one lock, no I/O under it).
 */
final class TokenReviewCache {
  /** What a review said: {@code null} status admits, a non-null one refuses with it. */
  record Answer(Status refusal) {
    static final Answer ADMITTED = new Answer(null);
  }

  private record Stored(Answer answer, long expiresAt) {}

  private final Ticker ticker;
  private final long ttlNanos;
  private final Map<String, Stored> entries;

  TokenReviewCache(Ticker ticker, Duration ttl, int capacity) {
    this.ticker = ticker;
    this.ttlNanos = ttl.toNanos();
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Stored> eldest) {
        return size() > capacity;
      }
    };
  }

  /** The answer for {@code key} if one was stored less than the TTL ago, else null. */
  synchronized Answer get(String key) {
    Stored e = entries.get(key);
    if (e == null) {
      return null;
    }
    if (ticker.nanoTime() - e.expiresAt >= 0) {
      entries.remove(key);
      return null;
    }
    return e.answer;
  }

  synchronized void put(String key, Answer answer) {
    entries.put(key, new Stored(answer, ticker.nanoTime() + ttlNanos));
  }

  synchronized int size() {
    return entries.size();
  }
}
