package dev.portage.tunnel.server;

import java.util.concurrent.ScheduledFuture;

/**
 * A dial forwarded to an agent and not answered yet, filed by its {@code random}. The timer (if a
 * backend dial timeout is set) is attached after filing; whoever removes the dial cancels it.
 */
final class PendingDial {
  final long random;
  final String address;
  final Frontend frontend;
  final Backend backend;
  final long startNanos;
  private volatile ScheduledFuture<?> timer;

  PendingDial(long random, String address, Frontend frontend, Backend backend, long startNanos) {
    this.random = random;
    this.address = address;
    this.frontend = frontend;
    this.backend = backend;
    this.startNanos = startNanos;
  }

  void timer(ScheduledFuture<?> t) {
    timer = t;
  }

  void cancelTimer() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
  }
}
