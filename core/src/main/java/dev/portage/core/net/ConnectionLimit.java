package dev.portage.core.net;

import io.netty.channel.Channel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cap on the connections one listener holds open at once, so a client that opens connections and
 * never finishes (or never closes) them cannot take every file descriptor of the process: a socket
 * accepted beyond the cap is closed at once. The listener's child initializer calls {@link
 * #admit(Channel)} first. A connection counts until it closes, or until its {@link Admission} is
 * released earlier (e.g. a cap on connections still sending their request head). One WARN per episode
 * of refusals (the first refusal after the listener was below its cap); {@link #refused()} counts them
 * all. Thread-safe.
 */
public final class ConnectionLimit {
  private static final Logger log = LoggerFactory.getLogger(ConnectionLimit.class);

  private final String listener;
  private final int max;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicBoolean saturated = new AtomicBoolean();

  /**
   * @param listener what the listener is, for the log line ("health listener on :8092")
   * @param max connections held at once, {@code > 0}
   */
  public ConnectionLimit(String listener, int max) {
    if (max <= 0) {
      throw new IllegalArgumentException("max: " + max + " (expected: > 0)");
    }
    this.listener = listener;
    this.max = max;
  }

  /** A counted connection; {@link #release()} counts it out before it closes. */
  public interface Admission {
    /** Counts the connection out (idempotent; closing the channel does it too). */
    void release();
  }

  /**
   * Counts {@code ch} in, and out again when it closes or its admission is released; null when the
   * listener already holds {@link #max()} connections, in which case the caller closes {@code ch}
   * without serving it.
   */
  public Admission admit(Channel ch) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      refused.incrementAndGet();
      if (saturated.compareAndSet(false, true)) {
        log.warn("{}: {} connections open, the most it holds; closing new ones until some end", listener, max);
      } else {
        log.debug("{}: at its cap of {} connections; closed {}", listener, max, ch);
      }
      return null;
    }
    saturated.set(false);
    AtomicBoolean counted = new AtomicBoolean(true);
    Admission admission = () -> {
      if (counted.compareAndSet(true, false)) {
        open.decrementAndGet();
      }
    };
    ch.closeFuture().addListener(f -> admission.release());
    return admission;
  }

  /** Connections counted in and not yet closed. */
  public int open() {
    return open.get();
  }

  /** Connections closed at once because the listener was at its cap, since start. */
  public long refused() {
    return refused.get();
  }

  public int max() {
    return max;
  }
}
