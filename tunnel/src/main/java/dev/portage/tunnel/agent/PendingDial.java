package dev.portage.tunnel.agent;

import io.netty.channel.Channel;
import java.util.concurrent.ScheduledFuture;

/**
 * A backend dial that has no DIAL_RSP yet, keyed by the server's {@code random}. Confined to the
 * owning {@link ServerConnection}'s event loop.
 */
final class PendingDial {
  final long random;
  final String address;
  final long startNanos;
  ScheduledFuture<?> timer;
  Channel channel;

  PendingDial(long random, String address, long startNanos) {
    this.random = random;
    this.address = address;
    this.startNanos = startNanos;
  }

  /** Stops the timeout and closes the half-made socket, if any. */
  void abandon() {
    cancelTimer();
    if (channel != null) {
      channel.close();
    }
  }

  void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
