package dev.portage.control.client.destination;

import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.time.TimeSource;
import io.grpc.Channel;
import io.grpc.SynchronizationContext;
import java.util.ArrayList;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client of the Linkerd {@code Destination} API: watches the endpoints and service profiles of
 * authorities ({@code web.default.svc.cluster.local:8080}) and hands whole, current values to
 * listeners, reconnecting with exponential backoff (Linkerd's 100 ms → 60 s, jitter 0.1 by default)
 * on every failure except INVALID_ARGUMENT and FAILED_PRECONDITION. After a reconnect the last set
 * stays in force until the new stream's first message replaces it.
 *
 * <p>The caller owns the channel. Thread-safe; listener calls of all watches are serialised in one
 * synchronization context and must not block.
 */
public final class DestinationClient implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DestinationClient.class);

  private final Channel channel;
  private final TimeSource time;
  private final BackoffPolicy backoff;
  private final RandomGenerator random;
  private final String contextToken;
  private final SynchronizationContext sync =
      new SynchronizationContext((t, e) -> log.error("destination client task failed", e));
  private final Set<ReconnectingStream<?>> watches = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  private DestinationClient(Builder b) {
    this.channel = b.channel;
    this.time = b.time;
    this.backoff = b.backoff;
    this.random = b.random;
    this.contextToken = b.contextToken;
  }

  /** A builder over {@code channel} (not closed by the client) with timers on {@code time}'s scheduler. */
  public static Builder newBuilder(Channel channel, TimeSource time) {
    return new Builder(channel, time);
  }

  /**
   * Watches the endpoints of {@code authority} ({@code host:port}).
   *
   * @throws IllegalStateException if the client is closed
   */
  public DestinationWatch watchEndpoints(String authority, EndpointListener listener) {
    Objects.requireNonNull(listener, "listener");
    return register(
        new EndpointWatch(channel, request(authority), sync, time.scheduler(), newBackoff(), watches::remove, listener));
  }

  /**
   * Watches the service profile of {@code authority} ({@code host:port}).
   *
   * @throws IllegalStateException if the client is closed
   */
  public DestinationWatch watchProfile(String authority, ProfileListener listener) {
    Objects.requireNonNull(listener, "listener");
    return register(
        new ProfileWatch(channel, request(authority), sync, time.scheduler(), newBackoff(), watches::remove, listener));
  }

  /** Watches not closed yet (for status pages and leak tests). */
  public int activeWatches() {
    return watches.size();
  }

  /** Closes every watch; the channel stays open. Idempotent. */
  @Override
  public void close() {
    closed = true;
    for (ReconnectingStream<?> w : new ArrayList<>(watches)) {
      w.close();
    }
  }

  private DestinationWatch register(ReconnectingStream<?> w) {
    if (closed) {
      throw new IllegalStateException("destination client is closed");
    }
    watches.add(w);
    w.start();
    if (closed) {
      w.close();
    }
    return w;
  }

  private GetDestination request(String authority) {
    Objects.requireNonNull(authority, "authority");
    if (authority.isEmpty()) {
      throw new IllegalArgumentException("authority: \"\" (expected: host:port)");
    }
    return GetDestination.newBuilder().setScheme("k8s").setPath(authority).setContextToken(contextToken).build();
  }

  private dev.portage.core.backoff.Backoff newBackoff() {
    // Each watch gets its own sequence; the jitter source is split so watches do not share state.
    synchronized (random) {
      return backoff.newBackoff(random instanceof SplittableRandom s ? s.split() : random);
    }
  }

  /** Options of a {@link DestinationClient}. Not thread-safe. */
  public static final class Builder {

    private final Channel channel;
    private final TimeSource time;
    private BackoffPolicy backoff = BackoffPolicy.LINKERD;
    private RandomGenerator random = new SplittableRandom();
    private String contextToken = "";

    private Builder(Channel channel, TimeSource time) {
      this.channel = Objects.requireNonNull(channel, "channel");
      this.time = Objects.requireNonNull(time, "time");
    }

    /** Reconnect backoff; default {@link BackoffPolicy#LINKERD}. */
    public Builder backoff(BackoffPolicy policy) {
      this.backoff = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** Source of backoff jitter; default a new {@link SplittableRandom}. */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * The caller's identity sent as {@code context_token}, JSON {@code {"ns":..,"nodeName":..,"pod":..}};
     * default empty.
     */
    public Builder contextToken(String token) {
      this.contextToken = Objects.requireNonNull(token, "token");
      return this;
    }

    public DestinationClient build() {
      return new DestinationClient(this);
    }
  }
}
