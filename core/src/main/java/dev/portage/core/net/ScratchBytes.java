package dev.portage.core.net;

import io.netty.util.concurrent.FastThreadLocal;

/**
 * A byte array per thread, of one fixed size, for copying a buffer's bytes out and back within a
 * single call (parsing a head, writing one, checksumming a body) without allocating per call. A
 * caller never keeps the array past the call that fetched it: the next call on the thread reuses it.
 */
public final class ScratchBytes {
  private final FastThreadLocal<byte[]> perThread;

  /** Arrays of {@code size} bytes, made on each thread's first {@link #get()}. */
  public ScratchBytes(int size) {
    if (size <= 0) {
      throw new IllegalArgumentException("scratch size must be positive: " + size);
    }
    this.perThread =
        new FastThreadLocal<>() {
          @Override
          protected byte[] initialValue() {
            return new byte[size];
          }
        };
  }

  /** This thread's array. */
  public byte[] get() {
    return perThread.get();
  }
}
