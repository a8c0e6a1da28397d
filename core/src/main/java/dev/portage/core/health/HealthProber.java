package dev.portage.core.health;

import dev.portage.core.balance.Endpoint;
import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Actively checks a changing set of endpoints and drives {@link Endpoint#setHealthy}: YurtHub's
 * health checker, generalised. Each endpoint is probed at once when it joins and then every interval;
 * a probe without an answer within the timeout fails. An endpoint turns unhealthy after {@code
 * unhealthyThreshold} consecutive failures and healthy again after {@code healthyThreshold}
 * consecutive successes.
 *
 * <table>
 *   <caption>Defaults (YurtHub)</caption>
 *   <tr><th>setting</th><th>default</th></tr>
 *   <tr><td>interval</td><td>10 s</td></tr>
 *   <tr><td>timeout</td><td>2 s</td></tr>
 *   <tr><td>healthy threshold</td><td>2 consecutive successes</td></tr>
 *   <tr><td>unhealthy threshold</td><td>3 consecutive failures</td></tr>
 *   <tr><td>initial health</td><td>healthy: a new endpoint takes traffic at once and a dead one is
 *       dropped after its third failed probe (≈ 2 intervals + timeout), rather than every endpoint
 *       waiting a whole interval for its second success at startup</td></tr>
 * </table>
 *
 * <p>Thread-safe. Timers run on the injected scheduler; probe results may arrive on any thread. An
 * endpoint is tracked by object identity, so feed it {@link dev.portage.core.balance.Balancer#endpoints()}:
 * endpoints kept across a balancer update keep their counts.
 */
public final class HealthProber<T> implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HealthProber.class);

  private final ScheduledExecutorService scheduler;
  private final HealthProbe<T> probe;
  private final long intervalNanos;
  private final long timeoutNanos;
  private final int healthyThreshold;
  private final int unhealthyThreshold;
  private final boolean initiallyHealthy;
  private final HealthListener<T> listener;

  private final Object lock = new Object();
  private final Map<Endpoint<T>, Probed> probed = new IdentityHashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  private HealthProber(Builder<T> b) {
    this.scheduler = b.time.scheduler();
    this.probe = b.probe;
    this.intervalNanos = b.interval.toNanos();
    this.timeoutNanos = b.timeout.toNanos();
    this.healthyThreshold = b.healthyThreshold;
    this.unhealthyThreshold = b.unhealthyThreshold;
    this.initiallyHealthy = b.initiallyHealthy;
    this.listener = b.listener;
  }

  /** A builder with YurtHub's defaults; timers go to {@code time.scheduler()}. */
  public static <T> Builder<T> builder(TimeSource time, HealthProbe<T> probe) {
    return new Builder<>(time, probe);
  }

  /**
   * Makes {@code endpoints} the set to probe. Endpoints already probed keep their state; new ones are
   * set to the initial health and probed at once; endpoints no longer in the set stop being probed
   * (their health is left as it was).
   *
   * @throws IllegalStateException after {@link #close()}
   */
  public void setEndpoints(Collection<Endpoint<T>> endpoints) {
    Objects.requireNonNull(endpoints, "endpoints");
    List<Probed> removed = new ArrayList<>();
    List<Probed> added = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("health prober closed");
      }
      Set<Endpoint<T>> wanted = Collections.newSetFromMap(new IdentityHashMap<>());
      for (Endpoint<T> e : endpoints) {
        wanted.add(Objects.requireNonNull(e, "endpoints contains null"));
      }
      for (var it = probed.entrySet().iterator(); it.hasNext(); ) {
        var entry = it.next();
        if (!wanted.contains(entry.getKey())) {
          removed.add(entry.getValue());
          it.remove();
        }
      }
      for (Endpoint<T> e : endpoints) { // in the given order, so probes start in that order
        if (!probed.containsKey(e)) {
          Probed p = new Probed(e);
          probed.put(e, p);
          added.add(p);
        }
      }
    }
    for (Probed p : added) {
      p.begin();
      log.debug("probing endpoint {} every {} ms", p.endpoint.id(), intervalNanos / 1_000_000);
    }
    for (Probed p : removed) {
      p.stop();
      log.debug("stopped probing endpoint {}", p.endpoint.id());
    }
  }

  /** Stops every timer and in-flight probe; endpoint health stays as it is. Idempotent. */
  @Override
  public void close() {
    List<Probed> all;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      all = new ArrayList<>(probed.values());
      probed.clear();
    }
    for (Probed p : all) {
      p.stop();
    }
  }

  /** Probe state of one endpoint. Fields are guarded by the instance's monitor. */
  private final class Probed {
    final Endpoint<T> endpoint;
    private ScheduledFuture<?> ticker;
    private boolean healthy;
    private int successes;
    private int failures;
    private long generation;
    private boolean inFlight;
    private boolean stopped;
    private ScheduledFuture<?> timeout;
    private CompletionStage<Boolean> stage;

    Probed(Endpoint<T> endpoint) {
      this.endpoint = endpoint;
      this.healthy = initiallyHealthy;
      endpoint.setHealthy(initiallyHealthy);
    }

    /** Schedules the first probe now and one every interval, unless stopped meanwhile. */
    synchronized void begin() {
      if (!stopped) {
        ticker = scheduler.scheduleAtFixedRate(this::start, 0, intervalNanos, TimeUnit.NANOSECONDS);
      }
    }

    void start() {
      long gen;
      synchronized (this) {
        // A probe slower than the interval (timeout > interval) skips ticks rather than piling up.
        if (stopped || inFlight) {
          return;
        }
        inFlight = true;
        gen = ++generation;
        timeout =
            scheduler.schedule(() -> timedOut(gen), timeoutNanos, TimeUnit.NANOSECONDS);
      }
      CompletionStage<Boolean> s;
      try {
        s = probe.probe(endpoint);
      } catch (RuntimeException e) {
        log.debug("probe of endpoint {} threw", endpoint.id(), e);
        finish(gen, false);
        return;
      }
      if (s == null) {
        log.debug("probe of endpoint {} returned no result", endpoint.id());
        finish(gen, false);
        return;
      }
      synchronized (this) {
        if (generation == gen && inFlight) {
          stage = s;
        }
      }
      s.whenComplete((ok, error) -> {
        if (error != null) {
          log.debug("probe of endpoint {} failed", endpoint.id(), error);
        }
        finish(gen, error == null && Boolean.TRUE.equals(ok));
      });
    }

    private void timedOut(long gen) {
      CompletionStage<Boolean> abandoned;
      synchronized (this) {
        abandoned = generation == gen ? stage : null;
      }
      if (finish(gen, false)) {
        log.debug("probe of endpoint {} timed out", endpoint.id());
        cancel(abandoned);
      }
    }

    /** Counts the result of probe {@code gen} once; returns whether it counted. */
    private boolean finish(long gen, boolean ok) {
      boolean changed = false;
      boolean nowHealthy;
      int streak;
      synchronized (this) {
        if (stopped || gen != generation || !inFlight) {
          return false; // late answer of a timed-out probe, or of a removed endpoint
        }
        inFlight = false;
        stage = null;
        timeout.cancel(false);
        if (ok) {
          failures = 0;
          streak = ++successes;
          if (!healthy && successes >= healthyThreshold) {
            healthy = true;
            changed = true;
          }
        } else {
          successes = 0;
          streak = ++failures;
          if (healthy && failures >= unhealthyThreshold) {
            healthy = false;
            changed = true;
          }
        }
        nowHealthy = healthy;
        if (changed) {
          // Written under the monitor so two transitions can never land out of order.
          endpoint.setHealthy(nowHealthy);
        }
      }
      if (changed) {
        log.info("endpoint {} ({}) is now {} after {} consecutive {}", endpoint.id(),
            endpoint.target(), nowHealthy ? "healthy" : "unhealthy", streak,
            nowHealthy ? "successful probes" : "failed probes");
        if (listener != null) {
          try {
            listener.onHealthChanged(endpoint, nowHealthy);
          } catch (RuntimeException e) {
            log.warn("health listener failed for endpoint {}", endpoint.id(), e);
          }
        }
      }
      return true;
    }

    void stop() {
      CompletionStage<Boolean> abandoned;
      synchronized (this) {
        stopped = true;
        abandoned = stage;
        stage = null;
        if (timeout != null) {
          timeout.cancel(false);
        }
        if (ticker != null) {
          ticker.cancel(false);
        }
      }
      cancel(abandoned);
    }

    private void cancel(CompletionStage<Boolean> abandoned) {
      if (abandoned instanceof Future<?> f) {
        f.cancel(false);
      }
    }
  }

  /** Settings of a {@link HealthProber}; not thread-safe. */
  public static final class Builder<T> {
    private final TimeSource time;
    private final HealthProbe<T> probe;
    private Duration interval = Duration.ofSeconds(10);
    private Duration timeout = Duration.ofSeconds(2);
    private int healthyThreshold = 2;
    private int unhealthyThreshold = 3;
    private boolean initiallyHealthy = true;
    private HealthListener<T> listener;

    private Builder(TimeSource time, HealthProbe<T> probe) {
      this.time = Objects.requireNonNull(time, "time");
      this.probe = Objects.requireNonNull(probe, "probe");
    }

    /** Time between the starts of two probes of one endpoint; default 10 s. */
    public Builder<T> interval(Duration interval) {
      this.interval = positive("interval", interval);
      return this;
    }

    /** How long a probe may take before it counts as failed; default 2 s. */
    public Builder<T> timeout(Duration timeout) {
      this.timeout = positive("timeout", timeout);
      return this;
    }

    /** Consecutive successes that make an unhealthy endpoint healthy; default 2. */
    public Builder<T> healthyThreshold(int successes) {
      this.healthyThreshold = atLeastOne("healthyThreshold", successes);
      return this;
    }

    /** Consecutive failures that make a healthy endpoint unhealthy; default 3. */
    public Builder<T> unhealthyThreshold(int failures) {
      this.unhealthyThreshold = atLeastOne("unhealthyThreshold", failures);
      return this;
    }

    /** Health given to an endpoint when it joins, before any probe answered; default healthy. */
    public Builder<T> initiallyHealthy(boolean healthy) {
      this.initiallyHealthy = healthy;
      return this;
    }

    /** Told of every health change; optional. */
    public Builder<T> listener(HealthListener<T> listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    public HealthProber<T> build() {
      return new HealthProber<>(this);
    }

    private static Duration positive(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
      }
      return d;
    }

    private static int atLeastOne(String name, int n) {
      if (n < 1) {
        throw new IllegalArgumentException(name + ": " + n + " (expected: >= 1)");
      }
      return n;
    }
  }
}
