package dev.portage.tunnel.agent;

import dev.portage.core.backoff.Backoff;
import dev.portage.core.backoff.BackoffPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's connections to the proxy servers, at most one per server ID (upstream's ClientSet). The
 * agent dials a single address, normally a load balancer, until it holds connections to N distinct
 * servers; a new connection that lands on a server it already holds is closed.
 *
 * <h2>Sync loop</h2>
 * One attempt at a time, on the injected scheduler. N comes from {@link #targetServerCount()}.
 * <ul>
 *   <li>N reached (and not {@code --sync-forever}): reset the backoff, check again after about one
 *       {@code --sync-interval}.
 *   <li>new server: keep it, reset the backoff, next attempt after about one {@code --sync-interval}.
 *   <li>duplicate server while short of N: retry at the previous delay (the balancer just picked a
 *       server we hold); duplicate with N reached ({@code --sync-forever}), or a failure: back off
 *       (×1.5, jitter 0.1, cap {@code --sync-interval-cap}).
 * </ul>
 * The probe runs every {@code --probe-interval} and drops connections that are not ready; the sync
 * loop then replaces them.
 *
 * <p>Threading: the sync chain is strictly sequential (a scheduler task starts a connect, its
 * completion schedules the next task), so the backoff has one user at a time. The map is concurrent;
 * connections remove themselves from their own event loop when they end.
 */
final class ClientSet implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ClientSet.class);

  private final AgentContext ctx;
  private final IntSupplier leaseCount;
  private final Backoff backoff;
  private final Map<String, ServerConnection> connections = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  private volatile int lastHeaderCount;
  private volatile boolean draining;
  private boolean closed; // guarded by lock
  private ScheduledFuture<?> syncTask; // guarded by lock
  private ScheduledFuture<?> probeTask; // guarded by lock
  private ServerConnection connecting; // guarded by lock
  private Duration lastDelay;

  /**
   * @param leaseCount live server leases, or null when {@code --count-server-leases} is off; values
   *     {@code <= 0} mean "unknown" and fall back to the {@code servercount} header
   */
  ClientSet(AgentContext ctx, IntSupplier leaseCount, RandomGenerator random) {
    this.ctx = ctx;
    this.leaseCount = leaseCount;
    TunnelAgentConfig cfg = ctx.config();
    this.backoff =
        new BackoffPolicy(cfg.syncInterval(), cfg.syncIntervalCap(), 1.5, 0.1).newBackoff(random);
    this.lastDelay = cfg.syncInterval();
  }

  /** Starts the sync loop (first attempt at once) and the probe. */
  void start() {
    synchronized (lock) {
      if (closed || syncTask != null) {
        return;
      }
      syncTask = ctx.time().scheduler().schedule(this::sync, 0, TimeUnit.NANOSECONDS);
      long probe = ctx.config().probeInterval().toNanos();
      probeTask =
          ctx.time().scheduler().scheduleWithFixedDelay(this::probe, probe, probe, TimeUnit.NANOSECONDS);
    }
  }

  /** Connections held, one per server ID. */
  int size() {
    return connections.size();
  }

  /** The held connections (a snapshot). */
  List<ServerConnection> connections() {
    return List.copyOf(connections.values());
  }

  /** Backend connections open across every server connection. */
  int openEndpointConnections() {
    int n = 0;
    for (ServerConnection c : connections.values()) {
      n += c.openEndpointConnections();
    }
    return n;
  }

  /** Backend dials in flight across every server connection. */
  int pendingDials() {
    int n = 0;
    for (ServerConnection c : connections.values()) {
      n += c.pendingDials();
    }
    return n;
  }

  /**
   * How many servers to connect to: the last {@code servercount} header (1 before any), or the lease
   * count, or the larger of the two, per {@code --server-count-source}.
   */
  int targetServerCount() {
    int header = Math.max(1, lastHeaderCount);
    if (leaseCount == null) {
      return header;
    }
    int leases = leaseCount.getAsInt();
    if (leases <= 0) {
      return header;
    }
    return switch (ctx.config().serverCountSource()) {
      case DEFAULT -> leases;
      case MAX -> Math.max(leases, header);
    };
  }

  /** Whether {@link #drain()} was called. */
  boolean draining() {
    return draining;
  }

  /** Sends DRAIN on every held connection, and on every connection made from now on. */
  void drain() {
    draining = true;
    for (ServerConnection c : connections.values()) {
      c.drain();
    }
  }

  private void sync() {
    ServerConnection c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      int target = targetServerCount();
      ctx.metrics().knownServerCount(target);
      if (!ctx.config().syncForever() && connections.size() >= target) {
        scheduleSync(settledDelay());
        return;
      }
      try {
        c = ServerConnection.open(ctx, this::onConnectionClosed);
      } catch (IOException | RuntimeException e) {
        log.warn("Cannot connect to proxy server {}:{}: {}",
            ctx.config().proxyServerHost(), ctx.config().proxyServerPort(), e.toString());
        scheduleSync(failureDelay());
        return;
      }
      connecting = c;
    }
    c.connected().whenComplete((ok, err) -> afterConnect(c, err));
  }

  private void afterConnect(ServerConnection c, Throwable err) {
    boolean closeIt = false;
    synchronized (lock) {
      connecting = null;
      if (closed) {
        closeIt = true;
      } else if (err != null) {
        log.warn("Cannot connect to proxy server {}:{}: {}",
            ctx.config().proxyServerHost(), ctx.config().proxyServerPort(), rootMessage(err));
        closeIt = true;
        scheduleSync(failureDelay());
      } else {
        lastHeaderCount = c.serverCount();
        int target = targetServerCount();
        ctx.metrics().knownServerCount(target);
        if (connections.putIfAbsent(c.serverId(), c) != null) {
          log.debug("Already connected to proxy server {}; closing the duplicate", c.serverId());
          closeIt = true;
          scheduleSync(connections.size() >= target ? failureDelay() : lastDelay);
        } else {
          ctx.metrics().serverConnections(connections.size());
          log.info("Holding {} of {} proxy server connections (new: {})",
              connections.size(), target, c.serverId());
          scheduleSync(settledDelay());
        }
      }
    }
    if (closeIt) {
      c.close();
    } else if (draining) {
      c.drain();
    }
  }

  private static String rootMessage(Throwable t) {
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** After a success: start over, about one sync interval (with jitter). */
  private Duration settledDelay() {
    backoff.reset();
    lastDelay = backoff.nextDelay();
    backoff.reset();
    return lastDelay;
  }

  private Duration failureDelay() {
    lastDelay = backoff.nextDelay();
    return lastDelay;
  }

  private void scheduleSync(Duration delay) {
    if (!closed) {
      syncTask = ctx.time().scheduler().schedule(this::sync, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void probe() {
    for (ServerConnection c : connections.values()) {
      if (!c.isReady()) {
        log.info("Connection to proxy server {} is not ready; dropping it", c.serverId());
        remove(c);
        c.close();
      }
    }
  }

  private void onConnectionClosed(ServerConnection c) {
    remove(c);
  }

  private void remove(ServerConnection c) {
    String id = c.serverId();
    if (id != null && connections.remove(id, c)) {
      ctx.metrics().serverConnections(connections.size());
    }
  }

  /** Stops syncing and probing, and closes every connection (waiting up to {@code timeout}). */
  void close(Duration timeout) {
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (syncTask != null) {
        syncTask.cancel(false);
      }
      if (probeTask != null) {
        probeTask.cancel(false);
      }
      if (connecting != null) {
        closing.add(connecting.close());
      }
    }
    for (ServerConnection c : connections.values()) {
      closing.add(c.close());
    }
    try {
      CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
          .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      log.warn("Server connections did not close within {}", timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      log.debug("Closing server connections failed", e);
    }
    connections.clear();
    ctx.metrics().serverConnections(0);
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }
}
