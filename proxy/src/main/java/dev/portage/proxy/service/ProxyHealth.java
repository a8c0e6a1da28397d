package dev.portage.proxy.service;

import dev.portage.core.admin.AdminResponse;
import dev.portage.core.time.Ticker;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;

/**
 * kube-proxy's health server semantics ({@code --healthz-bind-address}, port 10256): the proxy is
 * healthy unless a change has waited longer than {@code 2 × syncPeriod} for a sync that applied it
 * (so a stuck or failing sync loop turns the node unhealthy; cloud load balancers probe this). It
 * is healthy while starting. {@code /healthz} also requires the node to be eligible (this proxy
 * knows of no node deletion, so it always is); {@code /livez} does not look at the node. Both answer
 * kube-proxy's JSON body. Thread-safe.
 */
final class ProxyHealth {

  private final Ticker ticker;
  private final InstantSource wall;
  private final long timeoutNanos;
  private final KubeProxyMetrics metrics;
  private final Object lock = new Object();
  /** Ticker time of the oldest change not yet applied, or -1; guarded by lock. */
  private long oldestPending = -1;
  private boolean pending; // guarded by lock
  private Instant lastUpdated; // guarded by lock

  ProxyHealth(Ticker ticker, InstantSource wall, Duration syncPeriod, KubeProxyMetrics metrics) {
    this.ticker = ticker;
    this.wall = wall;
    this.timeoutNanos = syncPeriod.multipliedBy(2).toNanos();
    this.metrics = metrics;
    this.lastUpdated = wall.instant();
  }

  /** A change arrived that a sync must apply. */
  void queued() {
    synchronized (lock) {
      if (!pending) {
        pending = true;
        oldestPending = ticker.nanoTime();
      }
    }
    metrics.queued(wall.instant().toEpochMilli() / 1000.0);
  }

  /**
   * A sync that started at ticker time {@code startedNanos} applied every change queued before it.
   * Changes queued while it ran stay pending.
   */
  void applied(long startedNanos, boolean changesSinceStart) {
    synchronized (lock) {
      lastUpdated = wall.instant();
      if (!changesSinceStart) {
        pending = false;
        oldestPending = -1;
      } else if (pending && oldestPending - startedNanos < 0) {
        oldestPending = startedNanos; // only what arrived during the sync is still waiting
      }
    }
  }

  boolean healthy() {
    synchronized (lock) {
      return !pending || ticker.nanoTime() - oldestPending <= timeoutNanos;
    }
  }

  /** {@code /healthz}: health and node eligibility. */
  AdminResponse healthz() {
    return answer(true);
  }

  /** {@code /livez}: health only. */
  AdminResponse livez() {
    return answer(false);
  }

  private AdminResponse answer(boolean withNode) {
    boolean healthy = healthy();
    Instant updated;
    synchronized (lock) {
      updated = lastUpdated;
    }
    int code = healthy ? 200 : 503;
    String body = "{\"lastUpdated\": \"" + updated + "\",\"currentTime\": \"" + wall.instant() + "\""
        + (withNode ? ",\"nodeEligible\": true" : "") + "}";
    if (withNode) {
      metrics.healthz(code);
    } else {
      metrics.livez(code);
    }
    return new AdminResponse(code, "application/json", body.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        Map.of("X-Content-Type-Options", "nosniff"));
  }
}
