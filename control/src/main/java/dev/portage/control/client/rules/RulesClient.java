package dev.portage.control.client.rules;

import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.core.backoff.Backoff;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.time.TimeSource;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A dds ({@code RuleService.Observe}) client: subscribes to rule types, hands each full state to a
 * {@link RulesListener} and acknowledges it after the listener returns. When the stream ends it
 * reconnects with backoff and resumes: the first request of each type carries {@code rev:<n>}, the
 * last revision it delivered, so a control plane that has nothing newer sends nothing.
 *
 * <p>Threading: all state lives on one internal serialising context; the listener runs there. Methods
 * are thread-safe. Build with {@link #builder}, then {@link #start()}; {@link #close()} ends the stream
 * and stops reconnecting (it does not shut the channel down: the caller owns it).
 */
public final class RulesClient implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RulesClient.class);

  private final Channel channel;
  private final Set<String> types;
  private final RulesListener listener;
  private final TimeSource time;
  private final Metadata headers;
  private final Backoff backoff;
  private final SynchronizationContext ctx =
      new SynchronizationContext((t, e) -> log.error("dds client: unexpected failure", e));
  /** Written on {@link #ctx} only; concurrent so accessors can read it from any thread. */
  private final Map<String, Long> revisions = new ConcurrentHashMap<>();
  private ClientCallStreamObserver<ObserveRequest> stream;
  private ScheduledFuture<?> reconnect;
  private volatile long streams;
  private volatile boolean closed;
  private boolean started;

  private RulesClient(Builder b) {
    this.channel = b.channel;
    this.types = Set.copyOf(b.types);
    this.listener = b.listener;
    this.time = b.time;
    this.headers = b.headers;
    this.backoff = b.backoff.newBackoff(new SplittableRandom());
  }

  /**
   * Starts building a client.
   *
   * @param time the scheduler for reconnect delays
   */
  public static Builder builder(Channel channel, TimeSource time) {
    return new Builder(channel, time);
  }

  /** Opens the stream. Idempotent. */
  public void start() {
    ctx.execute(
        () -> {
          if (!started && !closed) {
            started = true;
            connect();
          }
        });
  }

  /** The revision last delivered for {@code type}, -1 if none yet. */
  public long revision(String type) {
    return revisions.getOrDefault(type, -1L);
  }

  /** Streams opened so far, the first one included (for tests and status pages). */
  public long streamsOpened() {
    return streams;
  }

  @Override
  public void close() {
    closed = true;
    ctx.execute(
        () -> {
          if (reconnect != null) {
            reconnect.cancel(false);
            reconnect = null;
          }
          if (stream != null) {
            stream.cancel("client closed", null);
            stream = null;
          }
        });
  }

  private void connect() {
    if (closed) {
      return;
    }
    reconnect = null;
    streams++;
    StreamHandler handler = new StreamHandler();
    RuleServiceGrpc.newStub(channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .observe(handler);
    // beforeStart() has set handler.requests; the stream is open.
    stream = handler.requests;
    for (String type : types) {
      long rev = revisions.getOrDefault(type, -1L);
      stream.onNext(
          ObserveRequest.newBuilder().setType(type).setNonce(rev >= 0 ? "rev:" + rev : "").build());
    }
  }

  private void deliver(StreamHandler h, ObserveResponse rsp) {
    if (closed || stream != h.requests) {
      return;
    }
    backoff.reset();
    if (!types.contains(rsp.getType())) {
      log.debug("dds client: ignoring push of unsubscribed type {}", rsp.getType());
      return;
    }
    RuleUpdate update = new RuleUpdate(rsp.getType(), rsp.getRevision(), List.copyOf(rsp.getDataList()));
    try {
      listener.onUpdate(update);
    } catch (RuntimeException e) {
      log.warn("dds client: listener failed on {} revision {}; not acknowledging", rsp.getType(),
          rsp.getRevision(), e);
      return;
    }
    revisions.put(rsp.getType(), rsp.getRevision());
    h.requests.onNext(ObserveRequest.newBuilder().setNonce(rsp.getNonce()).setType(rsp.getType()).build());
  }

  private void ended(StreamHandler h, Status status) {
    if (stream != h.requests) {
      return;
    }
    stream = null;
    if (closed) {
      return;
    }
    long delay = backoff.nextDelayNanos();
    log.info("dds client: stream ended ({}); reconnecting in {} ms", status, TimeUnit.NANOSECONDS.toMillis(delay));
    reconnect = time.scheduler().schedule(() -> ctx.execute(this::connect), delay, TimeUnit.NANOSECONDS);
  }

  /** One stream's callbacks; each hops onto the client's context. */
  private final class StreamHandler implements ClientResponseObserver<ObserveRequest, ObserveResponse> {
    ClientCallStreamObserver<ObserveRequest> requests;

    @Override
    public void beforeStart(ClientCallStreamObserver<ObserveRequest> requestStream) {
      this.requests = requestStream;
    }

    @Override
    public void onNext(ObserveResponse value) {
      ctx.execute(() -> deliver(this, value));
    }

    @Override
    public void onError(Throwable t) {
      ctx.execute(() -> ended(this, Status.fromThrowable(t)));
    }

    @Override
    public void onCompleted() {
      ctx.execute(() -> ended(this, Status.OK));
    }
  }

  /** Builds a {@link RulesClient}; not thread-safe. */
  public static final class Builder {
    private final Channel channel;
    private final TimeSource time;
    private final Set<String> types = new LinkedHashSet<>();
    private RulesListener listener;
    private Metadata headers = new Metadata();
    private BackoffPolicy backoff = BackoffPolicy.GRPC;

    private Builder(Channel channel, TimeSource time) {
      this.channel = Objects.requireNonNull(channel, "channel");
      this.time = Objects.requireNonNull(time, "time");
    }

    /** Adds rule types to subscribe to, e.g. {@code dubbo.apache.org/v1alpha1/TagRoute}. */
    public Builder subscribe(String... ruleTypes) {
      for (String t : ruleTypes) {
        if (t == null || t.isEmpty()) {
          throw new IllegalArgumentException("type: empty (expected: group/version/Kind)");
        }
        types.add(t);
      }
      return this;
    }

    public Builder listener(RulesListener l) {
      this.listener = Objects.requireNonNull(l, "listener");
      return this;
    }

    /** Headers sent on every stream, e.g. {@code authorization: Bearer <token>}. */
    public Builder headers(Metadata h) {
      this.headers = Objects.requireNonNull(h, "headers");
      return this;
    }

    /** Reconnect delays; default {@link BackoffPolicy#GRPC}. */
    public Builder backoff(BackoffPolicy policy) {
      this.backoff = Objects.requireNonNull(policy, "backoff");
      return this;
    }

    public RulesClient build() {
      if (types.isEmpty()) {
        throw new IllegalStateException("types: none (expected: at least one subscribe(...))");
      }
      if (listener == null) {
        throw new IllegalStateException("listener: missing");
      }
      return new RulesClient(this);
    }
  }
}
