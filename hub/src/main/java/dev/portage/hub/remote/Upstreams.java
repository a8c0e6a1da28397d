package dev.portage.hub.remote;

import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.Pick;
import dev.portage.core.health.HealthListener;
import dev.portage.core.health.HealthProber;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.time.TimeSource;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The API servers behind the hub: a core {@link Balancer} ({@code rr} or {@code priority}) over
 * them and one {@link HealthProber} probing each with {@code GET /readyz} (YurtHub's heartbeat
 * settings). Thread-safe: picks are lock-free, probes run on the injected scheduler.
 */
public final class Upstreams implements AutoCloseable {

  /** {@code --lb-mode}. */
  public enum LbMode {
    /** Round robin over healthy servers. */
    RR,
    /** The first healthy server in configured order. */
    PRIORITY
  }

  /**
   * Health-check settings ({@code --heartbeat-*}).
   *
   * @param interval time between probes of one server
   * @param timeout a probe without an answer by then fails
   * @param healthyThreshold consecutive successes that make a server healthy again
   * @param failedRetry consecutive failures that make it unhealthy
   */
  public record Heartbeat(Duration interval, Duration timeout, int healthyThreshold, int failedRetry) {
    /** YurtHub's defaults: 10 s, 2 s, 2, 3. */
    public static Heartbeat defaults() {
      return new Heartbeat(Duration.ofSeconds(10), Duration.ofSeconds(2), 2, 3);
    }
  }

  private final Balancer<ApiServer> balancer;
  private final HealthProber<ApiServer> prober;

  /**
   * @param listener told of every health change (metrics, logs); may be null
   */
  public Upstreams(
      List<ApiServer> servers,
      LbMode mode,
      Heartbeat heartbeat,
      HttpClientPool pool,
      EventLoopGroup group,
      TimeSource time,
      HealthListener<ApiServer> listener) {
    Objects.requireNonNull(servers, "servers");
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("servers: [] (expected: at least one API server)");
    }
    this.balancer = mode == LbMode.PRIORITY ? Balancer.priority() : Balancer.roundRobin();
    List<Endpoint<ApiServer>> endpoints = new ArrayList<>();
    for (ApiServer s : servers) {
      endpoints.add(Endpoint.of(s.url(), s));
    }
    balancer.update(endpoints);
    HealthProber.Builder<ApiServer> b =
        HealthProber.builder(time, new ReadyzProbe(pool, group, "/readyz"))
            .interval(heartbeat.interval())
            .timeout(heartbeat.timeout())
            .healthyThreshold(heartbeat.healthyThreshold())
            .unhealthyThreshold(heartbeat.failedRetry());
    if (listener != null) {
      b.listener(listener);
    }
    this.prober = b.build();
  }

  /** Starts probing (the first probe of each server runs at once). */
  public void start() {
    prober.setEndpoints(balancer.endpoints());
  }

  /** A healthy server, counted in flight until the pick ends; null when none is healthy. */
  public Pick<ApiServer> pick() {
    return balancer.pick();
  }

  /** Whether any server is healthy now (what a held offline watch polls). */
  public boolean anyHealthy() {
    for (Endpoint<ApiServer> e : balancer.endpoints()) {
      if (e.isHealthy()) {
        return true;
      }
    }
    return false;
  }

  /** The servers in configured order, with their health; for metrics. */
  public List<Endpoint<ApiServer>> endpoints() {
    return balancer.endpoints();
  }

  @Override
  public void close() {
    prober.close();
  }
}
