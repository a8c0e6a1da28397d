package dev.portage.tunnel.agent;

import io.netty.channel.Channel;

/**
 * A backend dial that has no DIAL_RSP yet, keyed by the server's {@code random}; its timeout is kept
 * by the owner's {@link DialTimeouts}. Confined to the owning {@link ServerConnection}'s event loop.
 */
final class PendingDial {
  final long random;
  final String address;
  final long startNanos;
  Channel channel;

  PendingDial(long random, String address, long startNanos) {
    this.random = random;
    this.address = address;
    this.startNanos = startNanos;
  }

  /** Closes the half-made socket, if any (its timeout is dropped by the owner's DialTimeouts). */
  void abandon() {
    if (channel != null) {
      channel.close();
    }
  }
}
