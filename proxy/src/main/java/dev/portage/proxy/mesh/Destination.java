package dev.portage.proxy.mesh;

import dev.portage.control.client.destination.DestinationWatch;
import dev.portage.control.client.destination.EndpointListener;
import dev.portage.control.client.destination.EndpointSet;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.EndpointReconnector;
import dev.portage.core.balance.FailureAccrual;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoints of one authority: a balancer fed by a Destination watch (whole sets; unchanged
 * endpoints keep their state), the endpoints' readiness (a failed connect makes one unreachable
 * until a background reconnect succeeds; failure accrual, when on, shuts one after consecutive
 * failures), a readiness signal for requests waiting while no endpoint is ready, and the fail-fast
 * flag. Thread-safe: updates come from the watch's serialised listener, readiness changes from the
 * reconnector and failure accrual, requests read the balancer's snapshot.
 */
final class Destination implements EndpointListener {

  private static final Logger log = LoggerFactory.getLogger(Destination.class);

  /**
   * How the endpoints of every destination are kept ready.
   *
   * @param reconnect backoff between reconnects of an unreachable endpoint
   * @param accrual failure accrual settings, or null for none (Linkerd's default)
   * @param connector opens a connection to an endpoint in the background
   */
  record Readiness(
      BackoffPolicy reconnect, FailureAccrual.Settings accrual, ScheduledExecutorService scheduler,
      RandomGenerator random, EndpointReconnector.Connector<InetSocketAddress> connector) {}

  final String authority;
  final Balancer<InetSocketAddress> balancer;
  private final EndpointReconnector<InetSocketAddress> reconnector;
  private final FailureAccrual accrual; // null: off
  private CompletableFuture<Void> ready = new CompletableFuture<>(); // guarded by this
  private volatile boolean failFast; // written under this; read per request without it
  private volatile DestinationWatch watch;
  private volatile long lastUsedNanos;

  Destination(String authority, Balancer<InetSocketAddress> balancer, Readiness readiness, long nowNanos) {
    this.authority = authority;
    this.balancer = balancer;
    this.lastUsedNanos = nowNanos;
    this.reconnector = new EndpointReconnector<>(
        readiness.reconnect(), readiness.scheduler(), readiness.random(), readiness.connector(),
        e -> balancer.endpoints().contains(e), e -> signalReady());
    this.accrual = readiness.accrual() == null ? null
        : new FailureAccrual(readiness.accrual(), readiness.scheduler(), readiness.random(), e -> signalReady());
  }

  void watch(DestinationWatch w) {
    this.watch = w;
  }

  @Override
  public void onEndpoints(EndpointSet set) {
    List<Endpoint<InetSocketAddress>> endpoints = new ArrayList<>(set.endpoints().size());
    for (InetSocketAddress a : set.endpoints().keySet()) {
      endpoints.add(Endpoint.of(a.getAddress().getHostAddress() + ":" + a.getPort(), a));
    }
    balancer.update(endpoints);
    if (accrual != null) {
      for (Endpoint<InetSocketAddress> e : balancer.endpoints()) {
        accrual.watch(e);
      }
    }
    log.debug("{}: {} endpoints (exists {})", authority, endpoints.size(), set.exists());
    signalReady();
  }

  @Override
  public void onError(Status status) {
    log.warn("{}: endpoint watch ended: {}", authority, status);
  }

  /**
   * A connect to {@code endpoint} failed: it is not picked until a background reconnect succeeds.
   */
  void connectFailed(Endpoint<InetSocketAddress> endpoint, Throwable cause) {
    reconnector.connectFailed(endpoint, cause);
  }

  /**
   * Completes once an endpoint is ready: at once if one is now, else at the next readiness change
   * (a new set, a reconnect, a probation).
   */
  synchronized CompletableFuture<Void> whenReady() {
    if (anyReady()) {
      return CompletableFuture.completedFuture(null);
    }
    return nextReady();
  }

  /** Completes at the next readiness change, whatever the endpoints are now. */
  synchronized CompletableFuture<Void> nextReady() {
    if (ready.isDone()) {
      ready = new CompletableFuture<>();
    }
    return ready;
  }

  /** An endpoint may have become ready: waiting requests look again, fail-fast ends if one is. */
  private void signalReady() {
    CompletableFuture<Void> toComplete;
    synchronized (this) {
      if (!anyReady()) {
        return;
      }
      failFast = false;
      toComplete = ready;
    }
    toComplete.complete(null);
  }

  private boolean anyReady() {
    for (Endpoint<InetSocketAddress> e : balancer.endpoints()) {
      if (e.isReady()) {
        return true;
      }
    }
    return false;
  }

  /** Whether requests should be refused at once until an endpoint is ready. */
  boolean inFailFast() {
    return failFast;
  }

  /** Enters fail-fast unless an endpoint became ready meanwhile. */
  synchronized void enterFailFast() {
    if (!anyReady()) {
      failFast = true;
    }
  }

  /**
   * A request used the destination at {@code nowNanos}. Written at most once per {@link
   * #TOUCH_RESOLUTION_NANOS}: a write per request from every event loop would move this object's
   * cache line between cores on every request, for an idle timeout counted in seconds.
   */
  void touch(long nowNanos) {
    if (nowNanos - lastUsedNanos >= TOUCH_RESOLUTION_NANOS) {
      lastUsedNanos = nowNanos;
    }
  }

  /** How stale the last use may be recorded ({@link #touch}): 1 ms. */
  static final long TOUCH_RESOLUTION_NANOS = 1_000_000;

  long lastUsedNanos() {
    return lastUsedNanos;
  }

  /** In-flight requests over every endpoint. */
  int inFlight() {
    return balancer.endpoints().stream().mapToInt(Endpoint::inFlight).sum();
  }

  /** Endpoints being reconnected now. */
  int reconnecting() {
    return reconnector.reconnecting();
  }

  void close() {
    DestinationWatch w = watch;
    if (w != null) {
      w.close();
    }
    reconnector.close();
    if (accrual != null) {
      accrual.close();
    }
  }
}
