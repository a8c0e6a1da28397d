package dev.portage.proxy.mesh;

import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.control.client.destination.DestinationClient;
import dev.portage.control.client.destination.DestinationWatch;
import dev.portage.control.client.destination.ProfileListener;
import dev.portage.core.time.Ticker;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Service profiles per authority, watched on first use and dropped after {@code idleTimeout}
 * without requests. {@link #get} completes with the first profile; later profiles replace the
 * snapshot (and with it the retry budget). Thread-safe.
 */
final class Profiles implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Profiles.class);

  private final DestinationClient client;
  private final Ticker ticker;
  private final long idleTimeoutNanos;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private volatile boolean closed;

  Profiles(DestinationClient client, Ticker ticker, Duration idleTimeout) {
    this.client = client;
    this.ticker = ticker;
    this.idleTimeoutNanos = idleTimeout.toNanos();
  }

  /** The current profile of {@code authority}; completes when the first one arrives. */
  CompletableFuture<ProfileSnapshot> get(String authority) {
    Entry e = entry(authority, ticker.nanoTime());
    ProfileSnapshot s = e.current;
    return s != null ? CompletableFuture.completedFuture(s) : e.first;
  }

  /**
   * The current profile of {@code authority} if it has arrived, else null (then {@link #get} waits
   * for it); counts as a use at {@code now} (a ticker reading the caller already took, such as the
   * request's start: the last use is kept to a millisecond anyway), and starts the watch, like
   * {@link #get}. Per request: no future.
   */
  ProfileSnapshot current(String authority, long now) {
    return entry(authority, now).current;
  }

  private Entry entry(String authority, long now) {
    Entry e = entries.get(authority); // no capturing lambda, no bin lock once the entry exists
    if (e == null) {
      e = entries.computeIfAbsent(authority, a -> {
        Entry created = new Entry(a);
        created.lastUsedNanos = now;
        if (!closed) {
          created.watch = client.watchProfile(a, created);
        }
        return created;
      });
    }
    if (now - e.lastUsedNanos >= Destination.TOUCH_RESOLUTION_NANOS) {
      e.lastUsedNanos = now; // not once per request from every loop: see Destination.touch
    }
    return e;
  }

  /** The profile already known for {@code authority}, or the default; does not start a watch. */
  ProfileSnapshot peek(String authority) {
    Entry e = entries.get(authority);
    ProfileSnapshot s = e == null ? null : e.current;
    return s == null ? ProfileSnapshot.DEFAULT : s;
  }

  /** Calls {@code action} with each watched authority whose profile has arrived (for metrics). */
  void forEachCurrent(BiConsumer<String, ProfileSnapshot> action) {
    for (Entry e : entries.values()) {
      ProfileSnapshot s = e.current;
      if (s != null) {
        action.accept(e.authority, s);
      }
    }
  }

  int size() {
    return entries.size();
  }

  /** Authorities whose profile is watched now, for dashboards. */
  java.util.Set<String> authorities() {
    return java.util.Set.copyOf(entries.keySet());
  }

  void evictIdle() {
    long now = ticker.nanoTime();
    for (Entry e : entries.values()) {
      if (now - e.lastUsedNanos >= idleTimeoutNanos && entries.remove(e.authority, e)) {
        e.close();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    entries.values().forEach(Entry::close);
    entries.clear();
  }

  private final class Entry implements ProfileListener {
    final String authority;
    final CompletableFuture<ProfileSnapshot> first = new CompletableFuture<>();
    volatile ProfileSnapshot current;
    volatile DestinationWatch watch;
    volatile long lastUsedNanos;

    Entry(String authority) {
      this.authority = authority;
    }

    @Override
    public void onProfile(DestinationProfile profile) {
      ProfileSnapshot s = ProfileSnapshot.of(profile, ticker);
      current = s;
      log.debug("{}: profile with {} routes, {} overrides", authority, s.routes().size(), s.overrides().size());
      first.complete(s);
    }

    @Override
    public void onError(Status status) {
      log.warn("{}: profile watch ended: {}", authority, status);
      first.complete(ProfileSnapshot.DEFAULT);
    }

    void close() {
      first.complete(ProfileSnapshot.DEFAULT);
      DestinationWatch w = watch;
      if (w != null) {
        w.close();
      }
    }
  }
}
