package dev.portage.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import sun.misc.Signal;

/**
 * How every long-running command waits: until SIGTERM or SIGINT. With a first-signal action (the
 * agent's DRAIN), the first signal runs it and the second stops; otherwise the first stops. Signal
 * handlers rather than a shutdown hook, because a hook cannot tell the first signal from the second
 * and runs after the JVM has begun to stop.
 */
final class StopSignals {
  private StopSignals() {}

  /** Blocks until the command should stop. */
  static void await(Logger log, Runnable onFirstSignal) throws InterruptedException {
    CountDownLatch stop = new CountDownLatch(1);
    AtomicInteger signals = new AtomicInteger();
    sun.misc.SignalHandler handler = signal -> {
      if (onFirstSignal != null && signals.incrementAndGet() == 1) {
        log.info("Received SIG{}: draining (send it again to stop)", signal.getName());
        onFirstSignal.run();
      } else {
        log.info("Received SIG{}: stopping", signal.getName());
        stop.countDown();
      }
    };
    Signal.handle(new Signal("TERM"), handler);
    Signal.handle(new Signal("INT"), handler);
    stop.await();
  }
}
