package dev.portage.tunnel.agent;

import dev.portage.core.time.Ticker;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts live proxy-server Leases ({@code --count-server-leases}): leases in {@code --lease-namespace}
 * matching {@code --lease-label-selector} whose renewTime (or acquireTime) plus leaseDurationSeconds
 * is after now. Listing is blocking HTTP, so {@link #count()} starts a refresh on the blocking executor
 * and answers from the last completed list (-1 before the first one). Thread-safe.
 */
final class LeaseCounter {
  private static final Logger log = LoggerFactory.getLogger(LeaseCounter.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String labelSelector;
  private final InstantSource wall;
  private final Executor blocking;
  private final Ticker ticker;
  private final AgentMetrics metrics;
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private volatile List<Instant> expiries;

  LeaseCounter(KubernetesClient client, String namespace, String labelSelector, InstantSource wall, Ticker ticker,
      Executor blocking, AgentMetrics metrics) {
    this.client = client;
    this.ticker = ticker;
    this.metrics = metrics;
    this.namespace = namespace;
    this.labelSelector = labelSelector;
    this.wall = wall;
    this.blocking = blocking;
  }

  /** Live leases as of the last completed list, or -1 when no list has succeeded yet. */
  int count() {
    refreshAsync();
    List<Instant> known = expiries;
    if (known == null) {
      return -1;
    }
    Instant now = wall.instant();
    int live = 0;
    for (Instant expiry : known) {
      if (expiry.isAfter(now)) {
        live++;
      }
    }
    return live;
  }

  private void refreshAsync() {
    if (refreshing.compareAndSet(false, true)) {
      blocking.execute(() -> {
        try {
          refreshNow();
        } finally {
          refreshing.set(false);
        }
      });
    }
  }

  /** Lists the leases now, on the calling thread; failures keep the previous result. */
  void refreshNow() {
    long start = ticker.nanoTime();
    try {
      List<Lease> leases =
          client.leases().inNamespace(namespace).withLabelSelector(labelSelector).list().getItems();
      metrics.leaseList(200, "", (ticker.nanoTime() - start) / 1e9);
      List<Instant> result = new ArrayList<>(leases.size());
      for (Lease lease : leases) {
        Instant expiry = expiry(lease.getSpec());
        if (expiry != null) {
          result.add(expiry);
        }
      }
      expiries = result;
    } catch (KubernetesClientException e) {
      metrics.leaseList(e.getCode(), e.getStatus() == null || e.getStatus().getReason() == null ? ""
          : e.getStatus().getReason(), (ticker.nanoTime() - start) / 1e9);
      log.warn("Cannot list server leases in {} ({}): {}", namespace, labelSelector, e.getMessage());
    }
  }

  private static Instant expiry(LeaseSpec spec) {
    if (spec == null || spec.getLeaseDurationSeconds() == null) {
      return null;
    }
    ZonedDateTime from = spec.getRenewTime() != null ? spec.getRenewTime() : spec.getAcquireTime();
    if (from == null) {
      return null;
    }
    return from.toInstant().plusSeconds(spec.getLeaseDurationSeconds());
  }
}
