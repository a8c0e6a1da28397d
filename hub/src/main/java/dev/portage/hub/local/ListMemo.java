package dev.portage.hub.local;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The last few list answers the local proxy encoded, each tagged with the cache generation it was
 * built from. While the cloud is away the cache rarely changes, so a repeated list (a kubelet's
 * re-list, a controller's resync) is answered with the bytes already encoded instead of reading and
 * parsing every object file again; any cache write bumps the generation and retires them all.
 * Bodies are kept in direct memory (freed by the GC, not reference counted), so each answer goes to
 * the socket without the copy a heap array needs. Bounded by entries and by body size. Thread-safe
 * (one lock, held only for map operations).
 */
final class ListMemo {

  static final int MAX_ENTRIES = 16;
  static final int MAX_BODY = 16 * 1024 * 1024;

  private record Memo(long generation, ByteBuffer body) {}

  private final Map<String, Memo> entries =
      new LinkedHashMap<>(MAX_ENTRIES, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Memo> eldest) {
          return size() > MAX_ENTRIES;
        }
      };

  /** A read-only view of the body stored for {@code key} at {@code generation}, or null. */
  synchronized ByteBuffer get(String key, long generation) {
    Memo e = entries.get(key);
    return e != null && e.generation() == generation ? e.body().duplicate() : null;
  }

  /** Remembers a copy of {@code body} as built from {@code generation}. */
  void put(String key, long generation, byte[] body) {
    if (body.length > MAX_BODY) {
      return;
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(body.length).put(body).flip().asReadOnlyBuffer();
    synchronized (this) {
      entries.put(key, new Memo(generation, direct));
    }
  }

  synchronized int size() {
    return entries.size();
  }
}
