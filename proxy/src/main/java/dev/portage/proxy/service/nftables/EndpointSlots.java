package dev.portage.proxy.service.nftables;

import dev.portage.proxy.service.model.Protocol;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Where each endpoint-selecting chain keeps its endpoints. A chain with N endpoints picks one with
 * {@code numgen random mod N offset K map @endpoints-<protocol>-<bucket>}: its endpoints are
 * elements {@code K .. K+N-1} of one of a few shared maps, instead of an anonymous map per chain.
 *
 * <p>Why: creating thousands of anonymous sets in one transaction is quadratic in the kernel (each
 * one searches the transaction list; measured 57 s for 10,000 Services × 10 endpoints laid out like
 * kube-proxy, against 4 s with shared maps), and one single shared map is quadratic too (each
 * element added is checked against every rule bound to the map). {@value #BUCKETS} maps per
 * protocol keep both costs small. A chain keeps its range while its endpoint count fits the range's
 * capacity (a power of two, at least {@value #MIN_CAPACITY}), so endpoint changes rewrite elements
 * only, not the chain.
 *
 * <p>Not thread-safe: owned by the sync.
 */
final class EndpointSlots {

  static final int BUCKETS = 64;
  static final int MIN_CAPACITY = 8;

  private final Map<String, Slot> slots = new HashMap<>();
  private final Map<String, Bucket> buckets = new HashMap<>();

  /**
   * The slot of {@code chain} for {@code count} endpoints: its current one when it still fits,
   * else a new range (the old one is freed).
   */
  Slot slot(String chain, Protocol protocol, int count) {
    if (count < 1) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 1)");
    }
    Slot current = slots.get(chain);
    if (current != null && current.protocol == protocol && current.capacity >= count) {
      return current;
    }
    if (current != null) {
      free(current);
    }
    int capacity = Math.max(MIN_CAPACITY, Integer.highestOneBit(count - 1) << 1);
    if (count == 1) {
      capacity = MIN_CAPACITY;
    }
    String map = mapName(protocol, Math.floorMod(chain.hashCode(), BUCKETS));
    Bucket bucket = buckets.computeIfAbsent(map, m -> new Bucket());
    long offset = bucket.allocate(capacity);
    Slot slot = new Slot(map, protocol, offset, capacity);
    slots.put(chain, slot);
    return slot;
  }

  /** Frees the slots of every chain not in {@code live}. */
  void retainOnly(Set<String> live) {
    for (Iterator<Map.Entry<String, Slot>> it = slots.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Slot> entry = it.next();
      if (!live.contains(entry.getKey())) {
        free(entry.getValue());
        it.remove();
      }
    }
  }

  /** Chains holding a slot. */
  int size() {
    return slots.size();
  }

  /** The declaration of a shared endpoint map. */
  static SetDeclaration declaration(Slot slot) {
    return SetDeclaration.map(
        slot.map, "typeof numgen random mod 1 : ip daddr . " + slot.protocol.nft() + " dport ;");
  }

  static String mapName(Protocol protocol, int bucket) {
    return String.format("endpoints-%s-%02d", protocol.nft(), bucket);
  }

  private void free(Slot slot) {
    buckets.get(slot.map).free(slot.offset, slot.capacity);
  }

  /**
   * A range of {@code capacity} keys starting at {@code offset} in map {@code map}.
   *
   * @param map the shared map's name
   * @param protocol the endpoints' protocol (each map serves one)
   * @param offset first key
   * @param capacity keys reserved
   */
  record Slot(String map, Protocol protocol, long offset, int capacity) {
    Slot {
      Objects.requireNonNull(map, "map");
      Objects.requireNonNull(protocol, "protocol");
    }
  }

  /** Ranges of one map: a bump pointer and free lists by capacity. */
  private static final class Bucket {
    private long next;
    private final Map<Integer, Deque<Long>> free = new HashMap<>();

    long allocate(int capacity) {
      Deque<Long> list = free.get(capacity);
      if (list != null && !list.isEmpty()) {
        return list.pop();
      }
      long offset = next;
      next += capacity;
      if (next > 0xffff_ffffL) {
        throw new IllegalStateException("endpoint map offsets exhausted (32-bit numgen offsets)");
      }
      return offset;
    }

    void free(long offset, int capacity) {
      free.computeIfAbsent(capacity, c -> new ArrayDeque<>()).push(offset);
    }
  }
}
