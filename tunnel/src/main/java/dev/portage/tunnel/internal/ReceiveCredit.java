package dev.portage.tunnel.internal;

/**
 * The receiving side of one connection's credit window: counts bytes written to the connection's
 * socket (or handed to its client stream) and says when to grant them back. Grants are batched at
 * half the window, so a sender that used its whole window always gets credit back once the bytes are
 * written, and a busy connection sends about two updates per window. Not thread-safe: owned by the
 * connection's event loop or serial executor.
 */
public final class ReceiveCredit {
  private final long threshold;
  private long unreported;

  public ReceiveCredit(long window) {
    if (window <= 0) {
      throw new IllegalArgumentException("window: " + window + " (expected: > 0)");
    }
    this.threshold = Math.max(1, window / 2);
  }

  /** {@code bytes} left for the socket; returns how many to grant now (0: keep batching). */
  public long written(int bytes) {
    unreported += bytes;
    if (unreported < threshold) {
      return 0;
    }
    long grant = unreported;
    unreported = 0;
    return grant;
  }
}
