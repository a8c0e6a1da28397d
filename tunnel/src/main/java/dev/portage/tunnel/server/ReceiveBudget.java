package dev.portage.tunnel.server;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds what one tunneled connection may hold on its way from the agent to its frontend. The agent
 * stream's receive path calls {@link #tryReserve} and never blocks; the frontend calls {@link #release}
 * once bytes left for its socket. The connection may always hold {@code minPackets} packets, and
 * beyond that up to {@code maxBytes} bytes; past both bounds the reservation fails for good
 * (overflowed) and the owner closes only that connection. Thread-safe.
 */
final class ReceiveBudget {
  private final long maxBytes;
  private final int minPackets;
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong packets = new AtomicLong();
  private final AtomicBoolean overflowed = new AtomicBoolean();

  ReceiveBudget(long maxBytes, int minPackets) {
    this.maxBytes = maxBytes;
    this.minPackets = minPackets;
  }

  /**
   * Counts {@code size} bytes in; false when the connection is over both bounds (or was before), in
   * which case nothing is counted and the packet must be dropped.
   */
  boolean tryReserve(int size) {
    if (overflowed.get()) {
      return false;
    }
    long p = packets.incrementAndGet();
    long b = bytes.addAndGet(size);
    if (p > minPackets && b > maxBytes) {
      packets.decrementAndGet();
      bytes.addAndGet(-size);
      overflowed.set(true);
      return false;
    }
    return true;
  }

  /** One packet of {@code size} bytes has been handed to the frontend's transport. */
  void release(int size) {
    packets.decrementAndGet();
    bytes.addAndGet(-size);
  }

  boolean overflowed() {
    return overflowed.get();
  }

  long queuedBytes() {
    return bytes.get();
  }
}
