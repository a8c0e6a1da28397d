package dev.portage.tunnel.internal;

import dev.portage.tunnel.wire.Metadata;

/**
 * The per-connection credit windows of one agent stream on which both ends negotiated Portage flow
 * control ({@code portage-flow-control: 1}). Each end announces, in {@code portage-flow-control-window},
 * how many bytes of one connection it is willing to hold unacknowledged; the peer starts every
 * connection with that much send credit. Immutable; internal to the tunnel module.
 *
 * @param sendWindow bytes of one connection this end may send before the peer grants more (the peer's
 *     announced window)
 * @param receiveWindow bytes of one connection this end announced it will hold; it grants credit back
 *     as it writes them out, in batches of at least half this window
 */
public record FlowControl(long sendWindow, long receiveWindow) {
  /**
   * How far beyond the window one DATA packet may take a connection: the window is checked before a
   * read, and one read (or one client packet, at most gRPC's 4 MiB message limit) may follow.
   */
  public static final long MAX_OVERSHOOT = 4L << 20;

  public FlowControl {
    if (sendWindow <= 0) {
      throw new IllegalArgumentException("sendWindow: " + sendWindow + " (expected: > 0)");
    }
    if (receiveWindow <= 0) {
      throw new IllegalArgumentException("receiveWindow: " + receiveWindow + " (expected: > 0)");
    }
  }

  /** The most one connection may legitimately hold queued toward its socket on the receiving end. */
  public long receiveLimit() {
    return receiveWindow + MAX_OVERSHOOT;
  }

  /**
   * Parses the peer's {@code portage-flow-control-window} value.
   *
   * @throws IllegalArgumentException with a message naming the header when it is not a window size
   */
  public static long parseWindow(String value, long max) {
    long w;
    try {
      w = Long.parseLong(value == null ? "" : value.strip());
    } catch (NumberFormatException e) {
      w = -1;
    }
    if (w < 1 || w > max) {
      throw new IllegalArgumentException(
          Metadata.FLOW_CONTROL_WINDOW.name() + ": " + value + " (expected: 1.." + max + ")");
    }
    return w;
  }
}
