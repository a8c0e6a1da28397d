package dev.portage.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import sun.misc.Signal;

/**
 * How every long-running command waits: until SIGTERM or SIGINT. With a first-signal action (the
 * agent's DRAIN), the first signal runs it and the second stops; otherwise the first stops. Signal
 * handlers rather than a shutdown hook, because a hook cannot tell the first signal from the second
 * and runs after the JVM has begun to stop. A command installs them before it starts its component:
 * a signal that arrives while the component is starting (an operator or the kubelet reacting to the
 * "started" log line) then stops it with exit code 0 once it has started instead of killing the JVM
 * (143); one more signal exits at once (a start or a stop that hangs).
 */
final class StopSignals {

  private final Logger log;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final AtomicInteger received = new AtomicInteger();
  private volatile Runnable onFirstSignal;

  private StopSignals(Logger log) {
    this.log = log;
  }

  /** Takes over SIGTERM and SIGINT for this process. */
  static StopSignals install(Logger log) {
    StopSignals signals = new StopSignals(log);
    sun.misc.SignalHandler handler = signal -> signals.received(signal.getName());
    Signal.handle(new Signal("TERM"), handler);
    Signal.handle(new Signal("INT"), handler);
    return signals;
  }

  private void received(String name) {
    Runnable first = onFirstSignal;
    if (first != null && received.incrementAndGet() == 1) {
      log.info("Received SIG{}: draining (send it again to stop)", name);
      first.run();
    } else if (stop.getCount() > 0) {
      log.info("Received SIG{}: stopping", name);
      stop.countDown();
    } else {
      // Still starting or already stopping, and asked again: do not make the operator wait.
      log.warn("Received SIG{} again: exiting now", name);
      System.exit(1);
    }
  }

  /**
   * Blocks until the command should stop; at once if a signal came while it was starting (there was
   * nothing to drain yet).
   *
   * @param onFirstSignal run on the first signal instead of stopping, or null
   */
  void await(Runnable onFirstSignal) throws InterruptedException {
    this.onFirstSignal = onFirstSignal;
    stop.await();
  }
}
