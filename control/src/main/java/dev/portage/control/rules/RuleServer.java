package dev.portage.control.rules;

import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.control.store.KindSnapshot;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.StoreEvent;
import dev.portage.control.store.StoreListener;
import dev.portage.control.store.Watch;
import dev.portage.core.time.Ticker;
import dev.portage.core.time.TimeSource;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.SynchronizationContext;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dds rule server ({@code org.apache.dubbo.auth.v1alpha1.RuleService/Observe}): streams the full
 * state of each subscribed dubbo rule type from the {@link ResourceStore} to every client, wire
 * compatible with dubbo-kubernetes, with the Portage fixes of shared/specs/rules.md.
 *
 * <p>Protocol as served here. A request {@code {nonce:"", type:T}} subscribes to T and queues its
 * latest state. Each push carries every object of T (as {@code <Kind>ToClient} in {@code Any}), the
 * kind's store revision, and a per-connection per-type nonce "1", "2", …. A request with the last
 * nonce sent for T acknowledges it; other nonces are ignored. A client already at a revision ≥ the
 * new one, or holding the same data, is not pushed to. <b>Resume</b>: a reconnecting client sends
 * {@code {nonce:"rev:<n>", type:T}} as its first request for T to say it has revision n, and gets
 * nothing until T moves past n (an upstream server treats that nonce as a stale ACK plus a
 * subscription). Unknown types are ignored.
 *
 * <p>Fixes over upstream: at most one push per type in flight per connection, newer states coalesced
 * behind it; no ACK within {@code ackTimeout} closes the stream ({@code DEADLINE_EXCEEDED}); store
 * changes debounced per type ({@code debounceAfter}, at most {@code debounceMax}); flow control per
 * connection with a bounded queue, so a slow client never delays another; revisions come from the
 * store, so they survive a restart. Authentication and authorization policies are filtered per client
 * ({@link PolicyFilter}); identity from a SPIFFE client certificate or a bearer token ({@link
 * PeerAuthenticator}).
 *
 * <p>Lifecycle: construct, {@link #start()}, bind {@link #serviceDefinition()} to a gRPC server,
 * {@link #close()}. Thread-safe.
 */
public final class RuleServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RuleServer.class);

  private final RuleServerConfig config;
  private final ResourceStore store;
  private final TimeSource time;
  private final RuleMetrics metrics;
  private final SnapshotBuilder builder;
  private final PolicyFilter filter;
  private final PeerAuthenticator authenticator;
  private final SynchronizationContext serial;
  private final Debouncer debouncer;
  private final Map<RuleKind, TypeSnapshot> latest = new ConcurrentHashMap<>();
  private final Map<Long, RuleConnection> connections = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final ServerServiceDefinition definition;
  private volatile Watch watch;
  private volatile boolean closed;
  /** Test seam: runs where a subscription found no state for a kind, before it lists the store. */
  private volatile Consumer<RuleKind> onFirstBuild = kind -> {};

  /**
   * @param tokens checks bearer tokens; null to refuse them (certificates and anonymous clients, when
   *     allowed, still work)
   */
  public RuleServer(
      RuleServerConfig config,
      ResourceStore store,
      TimeSource time,
      PrometheusRegistry registry,
      TokenAuthenticator tokens) {
    this.config = Objects.requireNonNull(config, "config");
    this.store = Objects.requireNonNull(store, "store");
    this.time = Objects.requireNonNull(time, "time");
    this.metrics = new RuleMetrics(Objects.requireNonNull(registry, "registry"));
    this.builder = new SnapshotBuilder(metrics);
    this.filter = new PolicyFilter(config.rootNamespace());
    this.authenticator = new PeerAuthenticator(config.requireAuth(), tokens);
    this.serial = new SynchronizationContext((t, e) -> log.error("dds: rule server task failed", e));
    this.debouncer =
        new Debouncer(
            config.debounceAfter(), config.debounceMax(), time.ticker(), time.scheduler(), serial, this::flush);
    this.definition = ServerInterceptors.intercept(new Service(), new PeerInfoInterceptor());
  }

  /** Starts watching the store. Idempotent. */
  public synchronized void start() {
    if (watch != null || closed) {
      return;
    }
    Set<String> types = Stream.of(RuleKind.values()).map(RuleKind::type).collect(Collectors.toSet());
    watch =
        store.watch(
            types,
            serial,
            new StoreListener() {
              @Override
              public void onEvent(StoreEvent event) {
                RuleKind kind = RuleKind.ofType(event.resource().key().kind());
                if (kind != null) {
                  debouncer.changed(kind);
                }
              }

              @Override
              public void onResync(long revision) {
                for (RuleKind kind : RuleKind.values()) {
                  debouncer.changed(kind);
                }
              }
            });
    log.info("dds rule server started (debounce {}..{}, ack timeout {}, auth {})",
        RuleConnection.format(config.debounceAfter()), RuleConnection.format(config.debounceMax()),
        RuleConnection.format(config.ackTimeout()),
        config.requireAuth() ? "required" : "optional");
  }

  /** The {@code RuleService} with its identity interceptor, ready for {@code ServerBuilder.addService}. */
  public ServerServiceDefinition serviceDefinition() {
    return definition;
  }

  /** Open {@code Observe} streams (for metrics, status pages and leak tests). */
  public int connectionCount() {
    return connections.size();
  }

  /**
   * Per dds type, in protocol order: the latest revision and object count, subscribed connections,
   * pushes waiting for their ACK and pushes sent. Read from the live state and the metrics on every
   * call (for the dashboard); thread-safe.
   */
  public List<RuleTypeStatus> typeStatus() {
    List<RuleTypeStatus> out = new ArrayList<>();
    for (RuleKind kind : RuleKind.values()) {
      String type = kind.type();
      TypeSnapshot s = latest.get(kind);
      // Before any client asked for a type no state is built: the store's own list says the same.
      KindSnapshot stored = s == null ? store.list(type) : null;
      out.add(new RuleTypeStatus(type, s != null ? s.revision() : stored.revision(),
          s != null ? s.entries().size() : stored.items().size(),
          (long) metrics.connectedClients.labelValues(type).get(),
          (long) metrics.unackedPushes.labelValues(type).get(),
          (long) metrics.pushes.labelValues(type).get()));
    }
    return out;
  }

  /** Stops watching and closes every stream with {@code UNAVAILABLE}. Idempotent. */
  @Override
  public void close() {
    Watch w;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      w = watch;
    }
    if (w != null) {
      w.close();
    }
    serial.execute(debouncer::close);
    for (RuleConnection c : connections.values()) {
      c.close(Status.UNAVAILABLE.withDescription("rule server shutting down"), "shutdown");
    }
    metrics.unregister();
    log.info("dds rule server closed");
  }

  // ---- for RuleConnection ----

  RuleServerConfig config() {
    return config;
  }

  RuleMetrics metrics() {
    return metrics;
  }

  PolicyFilter filter() {
    return filter;
  }

  Ticker ticker() {
    return time.ticker();
  }

  ScheduledExecutorService scheduler() {
    return time.scheduler();
  }

  /** The latest state of a type, built from the store on first use. */
  TypeSnapshot latest(RuleKind kind) {
    TypeSnapshot s = latest.get(kind);
    if (s != null) {
      return s;
    }
    onFirstBuild.accept(kind);
    return publish(builder.build(kind, store.list(kind.type()), time.ticker().nanoTime()));
  }

  /** Test seam: {@code hook} runs on the subscribing thread between a missing state and its build. */
  void onFirstBuild(Consumer<RuleKind> hook) {
    onFirstBuild = Objects.requireNonNull(hook, "hook");
  }

  void removed(RuleConnection c) {
    if (connections.remove(c.id) != null) {
      metrics.connections.dec();
    }
  }

  // ---- internals ----

  /**
   * Keeps the newer of the current and the given state and returns the one kept; if that is {@code
   * s}, offers it to every connection. Whoever installs a state fans it out, whether a flush or the
   * first subscriber of a type: a subscriber may have read the older state just before (two first
   * subscriptions building concurrently, the store changing between their lists), and the flush of
   * that same revision later finds it installed and must not be the only one to fan it out. A
   * connection reading {@link #latest} after the install gets the new state from there, one reading
   * it before gets the offer after its subscription (both hop onto the connection's context in that
   * order); offering a state a connection already has is a no-op.
   */
  private TypeSnapshot publish(TypeSnapshot s) {
    TypeSnapshot kept = latest.merge(s.kind(), s, (old, neu) -> neu.revision() > old.revision() ? neu : old);
    if (kept == s) {
      log.debug("dds: {} at revision {} ({} objects) to {} connections",
          s.kind().type(), s.revision(), s.entries().size(), connections.size());
      for (RuleConnection c : connections.values()) {
        c.offer(s);
      }
    }
    return kept;
  }

  /** On {@link #serial}: re-list a type after its debounce and fan the new state out. */
  private void flush(RuleKind kind, long firstChangeNanos) {
    if (closed) {
      return;
    }
    publish(builder.build(kind, store.list(kind.type()), firstChangeNanos));
  }

  private StreamObserver<ObserveRequest> observe(StreamObserver<ObserveResponse> responseObserver) {
    ServerCallStreamObserver<ObserveResponse> call = (ServerCallStreamObserver<ObserveResponse>) responseObserver;
    call.disableAutoRequest();
    RuleConnection conn = new RuleConnection(ids.incrementAndGet(), this, call);
    connections.put(conn.id, conn);
    metrics.connections.inc();
    if (closed) {
      conn.close(Status.UNAVAILABLE.withDescription("rule server shutting down"), "shutdown");
      return conn.inbound();
    }
    PeerInfo peer = Objects.requireNonNullElse(PeerInfo.KEY.get(), PeerInfo.NONE);
    authenticator
        .authenticate(peer)
        .whenComplete(
            (who, err) -> {
              if (err == null) {
                conn.authenticated(who);
                return;
              }
              Throwable cause = err.getCause() != null && !(err instanceof StatusException) ? err.getCause() : err;
              Status status =
                  cause instanceof StatusException se
                      ? se.getStatus()
                      : Status.UNAUTHENTICATED.withDescription(String.valueOf(cause.getMessage()));
              log.debug("dds connection {}: {}", conn.id, status.getDescription());
              conn.close(status, "unauthenticated");
            });
    return conn.inbound();
  }

  private final class Service extends RuleServiceGrpc.RuleServiceImplBase {
    @Override
    public StreamObserver<ObserveRequest> observe(StreamObserver<ObserveResponse> responseObserver) {
      return RuleServer.this.observe(responseObserver);
    }
  }
}
