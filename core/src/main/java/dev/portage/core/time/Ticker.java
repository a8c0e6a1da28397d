package dev.portage.core.time;

/**
 * A source of monotonic nanoseconds for measuring intervals. Main code takes one instead of calling
 * {@link System#nanoTime()} so tests can drive time with a fake clock. Implementations are thread-safe.
 */
@FunctionalInterface
public interface Ticker {

  /** Nanoseconds from an arbitrary fixed origin; only differences between two readings mean anything. */
  long nanoTime();

  /** The JVM's monotonic clock. */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}
