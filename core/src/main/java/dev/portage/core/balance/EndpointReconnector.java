package dev.portage.core.balance;

import dev.portage.core.backoff.Backoff;
import dev.portage.core.backoff.BackoffPolicy;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings endpoints back after a failed connect, as Linkerd's reconnect layer does: {@link
 * #connectFailed} marks the endpoint {@linkplain Endpoint#setReachable unreachable}, so balancers stop
 * picking it, and connects again in the background after a backoff (Linkerd's outbound 100 ms
 * doubling to 60 s, jitter 0.1, by default), again and again until a connect succeeds; then the
 * endpoint is reachable, its latency estimate starts over, and {@code onReachable} hears of it. No
 * request waits on these connects.
 *
 * <p>A loop stops when its endpoint is no longer {@code wanted} (removed from the balancer) or the
 * reconnector is closed. Thread-safe; each endpoint's loop runs one step at a time on the injected
 * scheduler and the connector's callbacks.
 */
public final class EndpointReconnector<T> implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EndpointReconnector.class);

  /** Opens a connection to an endpoint, in the background; the stage completes when it is up. */
  @FunctionalInterface
  public interface Connector<T> {
    CompletionStage<?> connect(Endpoint<T> endpoint);
  }

  private final BackoffPolicy policy;
  private final ScheduledExecutorService scheduler;
  private final RandomGenerator random;
  private final Connector<T> connector;
  private final Predicate<Endpoint<T>> wanted;
  private final Consumer<Endpoint<T>> onReachable;
  private final Map<Endpoint<T>, Loop> loops = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param random jitter source; must be thread-safe
   * @param wanted whether an endpoint is still in use; a loop for one that is not stops
   * @param onReachable told (outside any lock) when an endpoint is reachable again
   */
  public EndpointReconnector(
      BackoffPolicy policy, ScheduledExecutorService scheduler, RandomGenerator random,
      Connector<T> connector, Predicate<Endpoint<T>> wanted, Consumer<Endpoint<T>> onReachable) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.random = Objects.requireNonNull(random, "random");
    this.connector = Objects.requireNonNull(connector, "connector");
    this.wanted = Objects.requireNonNull(wanted, "wanted");
    this.onReachable = Objects.requireNonNull(onReachable, "onReachable");
  }

  /**
   * A connect to {@code endpoint} failed: it is unreachable from now on and a reconnect loop starts,
   * unless one runs already.
   */
  public void connectFailed(Endpoint<T> endpoint, Throwable cause) {
    Objects.requireNonNull(endpoint, "endpoint");
    if (closed) {
      return;
    }
    endpoint.setReachable(false);
    Loop created = new Loop(endpoint);
    if (loops.putIfAbsent(endpoint, created) == null) {
      log.warn("endpoint {} unreachable ({}); reconnecting with backoff", endpoint.id(), describe(cause));
      created.schedule();
    }
  }

  /** Endpoints being reconnected now. */
  public int reconnecting() {
    return loops.size();
  }

  /** Stops every loop; endpoints stay unreachable. Idempotent. */
  @Override
  public void close() {
    closed = true;
    for (Loop l : loops.values()) {
      l.cancel();
    }
    loops.clear();
  }

  private static String describe(Throwable cause) {
    if (cause == null) {
      return "connect failed";
    }
    String m = cause.getMessage();
    return m == null ? cause.getClass().getSimpleName() : m;
  }

  /** The reconnect loop of one endpoint: one step in flight at a time. */
  private final class Loop {
    private final Endpoint<T> endpoint;
    private final Backoff backoff = policy.newBackoff(random); // used by one step at a time
    private volatile ScheduledFuture<?> timer;

    Loop(Endpoint<T> endpoint) {
      this.endpoint = endpoint;
    }

    void schedule() {
      if (closed) {
        return;
      }
      timer = scheduler.schedule(this::attempt, backoff.nextDelayNanos(), TimeUnit.NANOSECONDS);
    }

    private void attempt() {
      if (closed || !wanted.test(endpoint)) {
        loops.remove(endpoint, this);
        return;
      }
      CompletionStage<?> connected;
      try {
        connected = connector.connect(endpoint);
      } catch (RuntimeException e) {
        failed(e);
        return;
      }
      connected.whenComplete((v, err) -> {
        if (err != null) {
          failed(err);
        } else {
          reachable();
        }
      });
    }

    private void failed(Throwable err) {
      log.debug("endpoint {}: reconnect {} failed: {}", endpoint.id(), backoff.attempts(), describe(err));
      schedule();
    }

    private void reachable() {
      loops.remove(endpoint, this);
      if (closed) {
        return;
      }
      endpoint.setReachable(true);
      log.info("endpoint {} reachable again after {} reconnect attempt(s)", endpoint.id(), backoff.attempts());
      onReachable.accept(endpoint);
    }

    void cancel() {
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
    }
  }
}
