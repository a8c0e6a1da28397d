package dev.portage.proxy.service;

import dev.portage.core.time.Ticker;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code sessionAffinity: ClientIP}: remembers which endpoint each client address last reached, for
 * a time to live counted from its last connection (kube-proxy: {@code timeoutSeconds}, default
 * 10800). Entries expire when looked up too late and in {@link #expire()}, which each sync calls;
 * entries for endpoints that left the service are dropped with {@link #retain}. Thread-safe.
 */
final class ClientIpAffinity {

  private record Entry(String endpointId, long lastUsedNanos) {}

  private final Duration timeout;
  private final long timeoutNanos;
  private final Ticker ticker;
  private final ConcurrentHashMap<InetAddress, Entry> entries = new ConcurrentHashMap<>();

  ClientIpAffinity(Duration timeout, Ticker ticker) {
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
    this.ticker = ticker;
  }

  Duration timeout() {
    return timeout;
  }

  /** The endpoint id {@code client} sticks to, or null when it has none or it expired. */
  String lookup(InetAddress client) {
    Entry entry = entries.get(client);
    if (entry == null) {
      return null;
    }
    if (ticker.nanoTime() - entry.lastUsedNanos >= timeoutNanos) {
      entries.remove(client, entry);
      return null;
    }
    return entry.endpointId;
  }

  /** {@code client} just connected to {@code endpointId}: stick to it and restart its time to live. */
  void record(InetAddress client, String endpointId) {
    entries.put(client, new Entry(endpointId, ticker.nanoTime()));
  }

  /** Drops entries of endpoints not in {@code endpointIds}. */
  void retain(Set<String> endpointIds) {
    entries.values().removeIf(e -> !endpointIds.contains(e.endpointId));
  }

  /** Drops expired entries; returns how many. */
  int expire() {
    long now = ticker.nanoTime();
    int before = entries.size();
    entries.values().removeIf(e -> now - e.lastUsedNanos >= timeoutNanos);
    return before - entries.size();
  }

  int size() {
    return entries.size();
  }
}
