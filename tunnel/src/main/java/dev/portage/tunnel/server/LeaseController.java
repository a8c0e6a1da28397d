package dev.portage.tunnel.server;

import dev.portage.core.time.TimeSource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces this server to agents that count server replicas by Lease ({@code --count-server-leases}):
 * keeps Lease {@code konnectivity-proxy-server-<serverID>} (duration 30 s) renewed every 15 s and
 * deletes other servers' leases of the same label once {@code renewTime + duration} has passed.
 * Timers run on the injected scheduler; each tick blocks on the Kubernetes API. Thread-safe.
 */
final class LeaseController implements AutoCloseable {
  static final Duration LEASE_DURATION = Duration.ofSeconds(30);
  static final Duration RENEW_INTERVAL = Duration.ofSeconds(15);
  static final Duration GC_INTERVAL = Duration.ofSeconds(15);
  private static final Logger log = LoggerFactory.getLogger(LeaseController.class);

  private final KubernetesClient client;
  private final TimeSource time;
  private final String namespace;
  private final Map<String, String> labels;
  private final String serverId;
  private final String name;
  private final ServerMetrics metrics;
  private ScheduledFuture<?> renewTask;
  private ScheduledFuture<?> gcTask;

  LeaseController(KubernetesClient client, TimeSource time, String namespace, Map<String, String> labels,
      String serverId, ServerMetrics metrics) {
    this.client = client;
    this.metrics = metrics;
    this.time = time;
    this.namespace = namespace;
    this.labels = Map.copyOf(labels);
    this.serverId = serverId;
    this.name = "konnectivity-proxy-server-" + serverId;
  }

  String leaseName() {
    return name;
  }

  /** Acquires the lease now (a failure is retried on the next tick) and starts both timers. */
  synchronized void start() {
    renew();
    renewTask = time.scheduler().scheduleAtFixedRate(
        this::renew, RENEW_INTERVAL.toNanos(), RENEW_INTERVAL.toNanos(), TimeUnit.NANOSECONDS);
    gcTask = time.scheduler().scheduleAtFixedRate(
        this::collectExpired, GC_INTERVAL.toNanos(), GC_INTERVAL.toNanos(), TimeUnit.NANOSECONDS);
  }

  void renew() {
    ZonedDateTime now = ZonedDateTime.ofInstant(time.wall().instant(), ZoneOffset.UTC);
    try {
      Lease existing = client.resources(Lease.class).inNamespace(namespace).withName(name).get();
      if (existing == null) {
        client.resources(Lease.class).inNamespace(namespace).resource(new LeaseBuilder()
            .withNewMetadata().withName(name).withNamespace(namespace).withLabels(labels).endMetadata()
            .withNewSpec()
            .withHolderIdentity(serverId)
            .withLeaseDurationSeconds((int) LEASE_DURATION.toSeconds())
            .withAcquireTime(now)
            .withRenewTime(now)
            .endSpec()
            .build()).create();
        log.info("server lease {}/{} acquired", namespace, name);
      } else {
        client.resources(Lease.class).inNamespace(namespace).resource(new LeaseBuilder(existing)
            .editMetadata().addToLabels(labels).endMetadata()
            .editSpec()
            .withHolderIdentity(serverId)
            .withLeaseDurationSeconds((int) LEASE_DURATION.toSeconds())
            .withRenewTime(now)
            .endSpec()
            .build()).update();
      }
    } catch (KubernetesClientException e) {
      log.warn("renewing server lease {}/{} failed; retrying in {}", namespace, name, RENEW_INTERVAL, e);
    }
  }

  /** Deletes leases (other than this server's) whose renew or acquire time plus duration has passed. */
  void collectExpired() {
    Instant now = time.wall().instant();
    long start = time.ticker().nanoTime();
    List<Lease> leases;
    try {
      leases = client.resources(Lease.class).inNamespace(namespace).withLabels(labels).list().getItems();
      metrics.leaseList(200, "", seconds(start));
    } catch (KubernetesClientException e) {
      metrics.leaseList(e.getCode(), reason(e), seconds(start));
      log.warn("collecting expired server leases in {} failed", namespace, e);
      return;
    }
    for (Lease lease : leases) {
      String leaseName = lease.getMetadata().getName();
      if (name.equals(leaseName) || isLive(lease, now)) {
        continue;
      }
      long deleteStart = time.ticker().nanoTime();
      try {
        client.resources(Lease.class).inNamespace(namespace).withName(leaseName).delete();
        metrics.leaseDelete(200, "", seconds(deleteStart), true);
        log.info("expired server lease {}/{} deleted", namespace, leaseName);
      } catch (KubernetesClientException e) {
        metrics.leaseDelete(e.getCode(), reason(e), seconds(deleteStart), false);
        log.warn("deleting expired server lease {}/{} failed", namespace, leaseName, e);
      }
    }
  }

  private double seconds(long startNanos) {
    return (time.ticker().nanoTime() - startNanos) / 1e9;
  }

  private static String reason(KubernetesClientException e) {
    return e.getStatus() == null || e.getStatus().getReason() == null ? "" : e.getStatus().getReason();
  }

  /** Live while renewTime (or acquireTime) + duration is after {@code now}. */
  static boolean isLive(Lease lease, Instant now) {
    if (lease.getSpec() == null || lease.getSpec().getLeaseDurationSeconds() == null) {
      return false;
    }
    ZonedDateTime stamp = lease.getSpec().getRenewTime() != null ? lease.getSpec().getRenewTime() : lease.getSpec().getAcquireTime();
    if (stamp == null) {
      return false;
    }
    return stamp.toInstant().plusSeconds(lease.getSpec().getLeaseDurationSeconds()).isAfter(now);
  }

  /** Stops the timers and deletes this server's lease, so agents stop counting it at once. */
  @Override
  public synchronized void close() {
    if (renewTask != null) {
      renewTask.cancel(false);
      gcTask.cancel(false);
    }
    try {
      client.resources(Lease.class).inNamespace(namespace).withName(name).delete();
    } catch (KubernetesClientException e) {
      log.warn("deleting server lease {}/{} failed; it expires in {}", namespace, name, LEASE_DURATION, e);
    }
  }
}
