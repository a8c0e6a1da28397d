package dev.portage.proxy.mesh;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Counts kept per thread (of one metric series): each thread that counts
 * gets its own padded {@code long[]}, which only it writes (a plain add and a release store: no
 * atomic instruction, no cache line shared with another writer), and a reader adds up every
 * thread's array. A thread finds its array by a scan over the few threads that counted (an event
 * loop or two). Thread-safe.
 */
final class PerThreadCells {

  /** Longs before and after a thread's slots, so no two threads' slots share a cache line. */
  static final int PAD = 8;

  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final Cell[] NONE = {};

  private record Cell(Thread owner, long[] slots) {}

  private final int width;
  private volatile Cell[] cells = NONE;

  /** @param width slots per thread */
  PerThreadCells(int width) {
    this.width = width;
  }

  /** The calling thread's slots (index {@code PAD + i}), made on its first call. */
  long[] mine() {
    Thread t = Thread.currentThread();
    for (Cell c : cells) {
      if (c.owner == t) {
        return c.slots;
      }
    }
    return add(t);
  }

  private synchronized long[] add(Thread t) {
    Cell[] cs = cells;
    Cell c = new Cell(t, new long[PAD + width + PAD]);
    Cell[] more = Arrays.copyOf(cs, cs.length + 1);
    more[cs.length] = c;
    cells = more;
    return c.slots;
  }

  /** Adds {@code delta} to slot {@code i} of the calling thread's {@code slots} (from {@link #mine}). */
  static void add(long[] slots, int i, long delta) {
    LONGS.setRelease(slots, PAD + i, slots[PAD + i] + delta);
  }

  /** Adds {@code value} to the double kept (as its bits) in slot {@code i} of the caller's slots. */
  static void addDouble(long[] slots, int i, double value) {
    long bits = Double.doubleToRawLongBits(Double.longBitsToDouble(slots[PAD + i]) + value);
    LONGS.setRelease(slots, PAD + i, bits);
  }

  /** Slot {@code i} of {@code slots} as last written by its thread. */
  static long read(long[] slots, int i) {
    return (long) LONGS.getAcquire(slots, PAD + i);
  }

  /** Slot {@code i} summed over every thread. */
  long sum(int i) {
    long sum = 0;
    for (Cell c : cells) {
      sum += read(c.slots, i);
    }
    return sum;
  }

  /** Calls {@code action} with each thread's slots, in the order the threads first counted. */
  void forEach(Consumer<long[]> action) {
    for (Cell c : cells) {
      action.accept(c.slots);
    }
  }
}
