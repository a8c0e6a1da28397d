package dev.portage.control.rules;

import com.google.protobuf.Any;
import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One dds {@code Observe} stream: its subscriptions, per-type push state and outbound queue.
 *
 * <p>Per type at most one push is in flight; newer states that arrive meanwhile replace each other
 * as "pending" and only the latest is sent once the in-flight push is acknowledged. A push not
 * acknowledged within the ACK timeout closes the stream with {@code DEADLINE_EXCEEDED}. Responses wait
 * in a bounded queue until the transport is ready (flow control); a full queue closes the stream with
 * {@code RESOURCE_EXHAUSTED}. Nothing here ever blocks, so a slow client holds up only itself.
 *
 * <p>Threading: all state is owned by this connection's {@link SynchronizationContext}; every entry
 * point (requests, readiness, cancellation, fan-out, timers) hops onto it.
 */
final class RuleConnection {

  private static final Logger log = LoggerFactory.getLogger(RuleConnection.class);

  /** First request of a type whose nonce is {@code rev:<n>}: the client already has revision n. */
  static final String RESUME_PREFIX = "rev:";

  final long id;
  private final RuleServer server;
  private final ServerCallStreamObserver<ObserveResponse> call;
  private final SynchronizationContext ctx;
  private final Map<RuleKind, TypeState> types = new EnumMap<>(RuleKind.class);
  private final ArrayDeque<Outbound> outbound = new ArrayDeque<>();
  private ClientIdentity identity;
  private boolean closed;

  RuleConnection(long id, RuleServer server, ServerCallStreamObserver<ObserveResponse> call) {
    this.id = id;
    this.server = server;
    this.call = call;
    this.ctx =
        new SynchronizationContext(
            (t, e) -> {
              log.error("dds connection {}: unexpected failure; closing", id, e);
              closeWith(Status.INTERNAL.withDescription("internal error"), "internal");
            });
    call.setOnReadyHandler(() -> ctx.execute(this::drain));
    call.setOnCancelHandler(() -> ctx.execute(this::cleanup));
  }

  /** The observer gRPC delivers the client's requests to. */
  StreamObserver<ObserveRequest> inbound() {
    return new StreamObserver<>() {
      @Override
      public void onNext(ObserveRequest req) {
        ctx.execute(() -> handle(req));
      }

      @Override
      public void onError(Throwable t) {
        ctx.execute(RuleConnection.this::cleanup);
      }

      @Override
      public void onCompleted() {
        ctx.execute(
            () -> {
              if (!closed) {
                call.onCompleted();
                cleanup();
              }
            });
      }
    };
  }

  /** The peer is known: start reading requests. */
  void authenticated(ClientIdentity who) {
    ctx.execute(
        () -> {
          if (closed) {
            return;
          }
          identity = who;
          log.debug("dds connection {}: client {}", id, who);
          call.request(1);
        });
  }

  /** Fails the stream with {@code status}; {@code reason} labels the disconnect metric. */
  void close(Status status, String reason) {
    ctx.execute(() -> closeWith(status, reason));
  }

  /** A new state of a type; ignored unless this connection subscribed to it. */
  void offer(TypeSnapshot snapshot) {
    ctx.execute(() -> accept(snapshot));
  }

  private void handle(ObserveRequest req) {
    if (closed) {
      return;
    }
    try {
      process(req);
    } finally {
      if (!closed) {
        call.request(1);
      }
    }
  }

  private void process(ObserveRequest req) {
    RuleKind kind = RuleKind.ofType(req.getType());
    if (kind == null) {
      server.metrics().unknownTypes.inc();
      log.debug("dds connection {}: ignoring request for unknown type '{}'", id, req.getType());
      return;
    }
    String nonce = req.getNonce();
    TypeState st = types.get(kind);
    if (st == null) {
      st = new TypeState(kind);
      types.put(kind, st);
      server.metrics().connectedClients.labelValues(kind.type()).inc();
      if (nonce.startsWith(RESUME_PREFIX)) {
        try {
          st.ackedRevision = Long.parseLong(nonce.substring(RESUME_PREFIX.length()));
        } catch (NumberFormatException e) {
          log.debug("dds connection {}: ignoring malformed resume nonce '{}'", id, nonce);
        }
      }
      log.debug("dds connection {}: subscribed to {} (resume at {})", id, kind.type(), st.ackedRevision);
      accept(server.latest(kind));
      return;
    }
    if (nonce.isEmpty() || nonce.startsWith(RESUME_PREFIX)) {
      // A repeated subscription asks for the latest state; the up-to-date check makes it idempotent.
      accept(server.latest(kind));
      return;
    }
    InFlight f = st.inFlight;
    if (f == null || !nonce.equals(f.nonce)) {
      server.metrics().staleNonces.labelValues(kind.type()).inc();
      log.debug("dds connection {}: ignoring stale nonce {} for {}", id, nonce, kind.type());
      return;
    }
    f.timeout.cancel(false);
    server
        .metrics()
        .ackLatency
        .labelValues(kind.type())
        .observe((server.ticker().nanoTime() - f.queuedNanos) / 1e9);
    st.ackedRevision = f.revision;
    st.ackedData = f.data;
    st.inFlight = null;
    server.metrics().unackedPushes.labelValues(kind.type()).dec();
    TypeSnapshot next = st.pending;
    st.pending = null;
    if (next != null) {
      push(st, next);
    }
  }

  private void accept(TypeSnapshot snapshot) {
    TypeState st = types.get(snapshot.kind());
    if (closed || st == null) {
      return;
    }
    if (st.inFlight != null) {
      if (st.pending == null || snapshot.revision() > st.pending.revision()) {
        st.pending = snapshot;
      }
      return;
    }
    push(st, snapshot);
  }

  private void push(TypeState st, TypeSnapshot snapshot) {
    List<Any> data = server.filter().select(snapshot, identity);
    if (st.ackedRevision >= snapshot.revision() || data.equals(st.ackedData)) {
      log.debug("dds connection {}: {} already up to date at {}", id, st.kind.type(), st.ackedRevision);
      return;
    }
    if (outbound.size() >= server.config().queueLimit()) {
      closeWith(
          Status.RESOURCE_EXHAUSTED.withDescription(
              "outbound queue full: " + outbound.size() + " responses waiting for a slow client"),
          "queue_overflow");
      return;
    }
    String nonce = Long.toString(++st.nonceCounter);
    ObserveResponse rsp =
        ObserveResponse.newBuilder()
            .setNonce(nonce)
            .setType(st.kind.type())
            .setRevision(snapshot.revision())
            .addAllData(data)
            .build();
    Duration ackTimeout = server.config().ackTimeout();
    ScheduledFuture<?> timeout =
        server
            .scheduler()
            .schedule(() -> ctx.execute(() -> ackTimedOut(st.kind, nonce)), ackTimeout.toNanos(), TimeUnit.NANOSECONDS);
    st.inFlight = new InFlight(nonce, snapshot.revision(), data, server.ticker().nanoTime(), timeout);
    server.metrics().unackedPushes.labelValues(st.kind.type()).inc();
    outbound.addLast(new Outbound(rsp, snapshot.changeNanos()));
    drain();
  }

  private void drain() {
    while (!closed && !outbound.isEmpty() && call.isReady()) {
      Outbound o = outbound.pollFirst();
      call.onNext(o.response);
      String type = o.response.getType();
      server.metrics().pushes.labelValues(type).inc();
      server
          .metrics()
          .pushLatency
          .labelValues(type)
          .observe(Math.max(0, server.ticker().nanoTime() - o.changeNanos) / 1e9);
    }
  }

  private void ackTimedOut(RuleKind kind, String nonce) {
    TypeState st = types.get(kind);
    if (closed || st == null || st.inFlight == null || !st.inFlight.nonce.equals(nonce)) {
      return;
    }
    server.metrics().ackTimeouts.labelValues(kind.type()).inc();
    String why =
        "no ACK for type " + kind.type() + " nonce " + nonce + " within " + format(server.config().ackTimeout());
    log.warn("dds connection {} ({}): {}; closing", id, identity, why);
    closeWith(Status.DEADLINE_EXCEEDED.withDescription(why), "ack_timeout");
  }

  private void closeWith(Status status, String reason) {
    if (closed) {
      return;
    }
    if (!status.getCode().equals(Status.Code.UNAVAILABLE)) {
      log.debug("dds connection {}: closing: {}", id, status);
    }
    server.metrics().disconnects.labelValues(reason).inc();
    try {
      call.onError(status.asRuntimeException());
    } catch (IllegalStateException e) {
      log.debug("dds connection {}: already closed by the transport", id);
    }
    cleanup();
  }

  private void cleanup() {
    if (closed) {
      return;
    }
    closed = true;
    for (TypeState st : types.values()) {
      if (st.inFlight != null) {
        st.inFlight.timeout.cancel(false);
        server.metrics().unackedPushes.labelValues(st.kind.type()).dec();
      }
      server.metrics().connectedClients.labelValues(st.kind.type()).dec();
    }
    types.clear();
    outbound.clear();
    server.removed(this);
  }

  static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** Push state of one subscribed type. */
  private static final class TypeState {
    final RuleKind kind;
    long nonceCounter;
    /** Revision the client is known to have, -1 if none. */
    long ackedRevision = -1;
    /** Data the client acknowledged, null if unknown (new or resumed subscription). */
    List<Any> ackedData;
    InFlight inFlight;
    TypeSnapshot pending;

    TypeState(RuleKind kind) {
      this.kind = kind;
    }
  }

  private record InFlight(String nonce, long revision, List<Any> data, long queuedNanos, ScheduledFuture<?> timeout) {}

  private record Outbound(ObserveResponse response, long changeNanos) {}
}
