package dev.portage.proxy.mesh;

import dev.portage.control.client.destination.DestinationClient;
import dev.portage.core.balance.Balancer;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The discover layer's cache: one {@link Destination} (endpoint watch + balancer) per authority,
 * created on first use and closed by {@link #evictIdle} after {@code idleTimeout} without requests
 * and with nothing in flight. Thread-safe.
 */
final class Discovery implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Discovery.class);

  private final DestinationClient client;
  private final Supplier<Balancer<InetSocketAddress>> balancers;
  private final Destination.Readiness readiness;
  private final Ticker ticker;
  private final long idleTimeoutNanos;
  private final Map<String, Destination> destinations = new ConcurrentHashMap<>();
  private volatile boolean closed;

  Discovery(
      DestinationClient client, Supplier<Balancer<InetSocketAddress>> balancers,
      Destination.Readiness readiness, Ticker ticker, Duration idleTimeout) {
    this.client = client;
    this.balancers = balancers;
    this.readiness = readiness;
    this.ticker = ticker;
    this.idleTimeoutNanos = idleTimeout.toNanos();
  }

  /** The destination of {@code authority}, watched from now on if it was not. */
  Destination get(String authority) {
    return get(authority, ticker.nanoTime());
  }

  /**
   * As {@link #get(String)}, used at {@code now} (a ticker reading the caller has already taken,
   * such as the request's start: the last use is kept to a millisecond anyway).
   */
  Destination get(String authority, long now) {
    Destination d = destinations.get(authority);
    if (d == null) {
      d = destinations.computeIfAbsent(authority, a -> {
        Destination created = new Destination(a, balancers.get(), readiness, now);
        if (!closed) {
          created.watch(client.watchEndpoints(a, created));
        }
        log.debug("discovering {}", a);
        return created;
      });
    }
    d.touch(now);
    return d;
  }

  Collection<Destination> all() {
    return destinations.values();
  }

  /** Closes destinations unused for the idle timeout with nothing in flight. */
  void evictIdle() {
    long now = ticker.nanoTime();
    for (Destination d : destinations.values()) {
      if (now - d.lastUsedNanos() >= idleTimeoutNanos && d.inFlight() == 0
          && destinations.remove(d.authority, d)) {
        d.close();
        log.debug("{}: idle, no longer discovered", d.authority);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    for (Destination d : destinations.values()) {
      d.close();
    }
    destinations.clear();
  }
}
