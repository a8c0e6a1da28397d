package dev.portage.tunnel.internal;

/**
 * The sending side of one connection's credit window: bytes it may still send before the receiver
 * grants more. A connection reads its socket only while credit is left; one read may take it below
 * zero by at most one chunk. Not thread-safe: owned by the connection's event loop or serial executor.
 */
public final class SendCredit {
  private final long window;
  private long credit;

  public SendCredit(long window) {
    if (window <= 0) {
      throw new IllegalArgumentException("window: " + window + " (expected: > 0)");
    }
    this.window = window;
    this.credit = window;
  }

  /** True while the connection may read (and send) more. */
  public boolean available() {
    return credit > 0;
  }

  /** {@code bytes} were sent as DATA. */
  public void consume(int bytes) {
    credit -= bytes;
  }

  /**
   * The receiver wrote {@code bytes} more; returns null when accepted, else why the grant is malformed
   * (not positive, or more than was ever sent: credit would exceed the window).
   */
  public String grant(long bytes) {
    if (bytes <= 0) {
      return "window update of " + bytes + " bytes (expected: > 0)";
    }
    if (bytes > window - credit) {
      return "window update of " + bytes + " bytes but only " + (window - credit)
          + " are unacknowledged (expected: <= unacknowledged bytes, window " + window + ")";
    }
    credit += bytes;
    return null;
  }

  /** Bytes still allowed before a grant; negative after an overshooting read. */
  public long credit() {
    return credit;
  }
}
