package dev.portage.proxy.mesh;

import dev.portage.control.client.destination.DestinationWatch;
import dev.portage.control.client.destination.EndpointListener;
import dev.portage.control.client.destination.EndpointSet;
import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoints of one authority: a balancer fed by a Destination watch (whole sets; unchanged
 * endpoints keep their load state), a readiness signal for requests waiting on an empty set, and
 * the fail-fast flag. Thread-safe: updates come from the watch's serialised listener, requests read
 * the balancer's snapshot.
 */
final class Destination implements EndpointListener {

  private static final Logger log = LoggerFactory.getLogger(Destination.class);

  final String authority;
  final Balancer<InetSocketAddress> balancer;
  private CompletableFuture<Void> ready = new CompletableFuture<>(); // guarded by this
  private boolean failFast; // guarded by this
  private volatile DestinationWatch watch;
  private volatile long lastUsedNanos;

  Destination(String authority, Balancer<InetSocketAddress> balancer, long nowNanos) {
    this.authority = authority;
    this.balancer = balancer;
    this.lastUsedNanos = nowNanos;
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
    log.debug("{}: {} endpoints (exists {})", authority, endpoints.size(), set.exists());
    CompletableFuture<Void> toComplete = null;
    synchronized (this) {
      if (!endpoints.isEmpty()) {
        failFast = false;
        toComplete = ready;
      } else if (ready.isDone()) {
        ready = new CompletableFuture<>();
      }
    }
    if (toComplete != null) {
      toComplete.complete(null);
    }
  }

  @Override
  public void onError(Status status) {
    log.warn("{}: endpoint watch ended: {}", authority, status);
  }

  /** Completes once the set holds an endpoint (at once if it does now). */
  synchronized CompletableFuture<Void> whenReady() {
    return ready;
  }

  /** Whether requests should be refused at once until an endpoint is ready. */
  synchronized boolean inFailFast() {
    return failFast;
  }

  /** Enters fail-fast unless an endpoint became ready meanwhile. */
  synchronized void enterFailFast() {
    if (!ready.isDone()) {
      failFast = true;
    }
  }

  void touch(long nowNanos) {
    lastUsedNanos = nowNanos;
  }

  long lastUsedNanos() {
    return lastUsedNanos;
  }

  /** In-flight requests over every endpoint. */
  int inFlight() {
    return balancer.endpoints().stream().mapToInt(Endpoint::inFlight).sum();
  }

  void close() {
    DestinationWatch w = watch;
    if (w != null) {
      w.close();
    }
  }
}
