package dev.portage.proxy.service;

import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.ratelimit.BoundedFrequencyRunner;
import dev.portage.core.time.TimeSource;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy-style L4 service proxy: one TCP listener per service port, each accepted connection
 * relayed to an endpoint chosen by the service's balancer. Services and endpoints come from an
 * endpoint source (a YAML file, Kubernetes EndpointSlices, or the control plane's Destination API);
 * every change asks one {@link BoundedFrequencyRunner} for a sync, which opens and closes listeners
 * and updates balancers, at most {@code syncBurst} times back to back and then once per {@code
 * minSyncPeriod}, and at least once per {@code syncPeriod}.
 *
 * <p>{@link #start()} and {@link #close()} are called once each, from a thread that is not an event
 * loop; the accessors are thread-safe. Syncs run on the injected scheduler.
 */
public final class ServiceProxy implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ServiceProxy.class);

  private final ServiceProxyConfig config;
  private final TimeSource time;
  private final PrometheusRegistry registry;
  private final ServiceProxyMetrics metrics;
  private final EndpointSource source;
  private final Set<ProxiedConnection> live = ConcurrentHashMap.newKeySet();
  /** Written by the sync only (serialised by the runner); read by accessors. */
  private final Map<String, ServiceListener> listeners = new ConcurrentHashMap<>();
  private final BoundedFrequencyRunner runner;

  private volatile Map<String, ServiceSpec> desired;
  private volatile boolean synced;
  private EventLoopGroup group; // guarded by this
  private ListenerContext context; // set by start(), read by the sync
  private AdminServer admin; // guarded by this
  private boolean started; // guarded by this
  private boolean closed; // guarded by this

  /** A proxy over the endpoint source {@code config} names. Nothing runs until {@link #start()}. */
  public ServiceProxy(ServiceProxyConfig config, TimeSource time, PrometheusRegistry registry) {
    this(config, null, time, registry);
  }

  /** A proxy over {@code source} (tests), or over the source {@code config} names when null. */
  ServiceProxy(
      ServiceProxyConfig config, EndpointSource source, TimeSource time, PrometheusRegistry registry) {
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metrics = new ServiceProxyMetrics(registry);
    this.source = source != null ? source : EndpointSource.fromConfig(config, time, metrics::sourceError);
    this.runner =
        new BoundedFrequencyRunner(
            "service-proxy-sync", this::sync, config.minSyncPeriod(), config.syncPeriod(),
            config.syncBurst(), time);
  }

  /**
   * Starts the event loops, the endpoint source, the sync loop and the admin listener.
   *
   * @return this proxy
   * @throws IOException if the source cannot start (e.g. a malformed endpoints file) or the admin
   *     port cannot be bound; everything started so far is closed again
   */
  public ServiceProxy start() throws IOException {
    synchronized (this) {
      if (started || closed) {
        throw new IllegalStateException(closed ? "service proxy is closed" : "service proxy already started");
      }
      started = true;
      NettyTransport transport = NettyTransport.best();
      group = transport.newEventLoopGroup(config.ioThreads(), "portage-service-proxy");
      // Bulk transfers grow their reads toward maxReadSize: fewer reads, writes and wake-ups per
      // byte; small exchanges keep small buffers.
      RecvByteBufAllocator reads =
          new AdaptiveRecvByteBufAllocator(64, 2048, config.maxReadSize());
      context = new ListenerContext(
          transport, group, time.ticker(), metrics, config.dialTimeouts(), reads, live);
    }
    try {
      source.start(this::onState);
      runner.start();
      if (config.adminPort() >= 0) {
        AdminServer server =
            AdminServer.builder()
                .bindAddress(config.adminBindAddress())
                .port(config.adminPort())
                .registry(registry)
                .readinessCheck("sync", this::readiness)
                .dashboard(DashboardState.COMPONENT, new DashboardState(this))
                .wallClock(time.wall())
                .build();
        synchronized (this) {
          admin = server;
        }
        server.start();
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
    log.info("Service proxy started ({}, min sync {}, sync {})",
        source, config.minSyncPeriod(), config.syncPeriod());
    return this;
  }

  /** The bound address of {@code service}'s listener, or null when it has none (yet). */
  public InetSocketAddress localAddress(String service) {
    ServiceListener listener = listeners.get(service);
    return listener == null ? null : listener.localAddress();
  }

  /** Names of the services with an open listener. */
  public Set<String> services() {
    return new TreeSet<>(listeners.keySet());
  }

  /**
   * The admin listener's bound address.
   *
   * @throws IllegalStateException if the admin listener is disabled or not started
   */
  public synchronized InetSocketAddress adminAddress() {
    if (admin == null) {
      throw new IllegalStateException("admin listener not running");
    }
    return admin.localAddress();
  }

  /** Whether a sync has applied a state from the source; {@code /readyz} reports this. */
  public boolean isReady() {
    return synced;
  }

  /** Syncs run so far (including rate-limited retries of the runner). */
  long syncs() {
    return runner.runs();
  }

  /** Connections accepted and not closed yet (dialing or relaying). */
  int liveConnections() {
    return live.size();
  }

  /** Endpoint ids ({@code host:port}) {@code service}'s balancer holds now; empty without a listener. */
  List<String> endpoints(String service) {
    ServiceListener listener = listeners.get(service);
    return listener == null ? List.of() : listener.endpointIds();
  }

  /** The configuration this proxy runs with. */
  ServiceProxyConfig config() {
    return config;
  }

  /** Connections accepted and not closed yet, live (a read-only view, for the dashboard). */
  Set<ProxiedConnection> connections() {
    return java.util.Collections.unmodifiableSet(live);
  }

  /** The open listeners, by service name (a snapshot, for the dashboard). */
  java.util.SortedMap<String, ServiceListener> listeners() {
    return new java.util.TreeMap<>(listeners);
  }

  /** Affinity entries of {@code service}; for tests. */
  int affinityEntries(String service) {
    ServiceListener listener = listeners.get(service);
    return listener == null ? 0 : listener.affinityEntries();
  }

  /**
   * Stops the sync loop and the source, unbinds every listener, closes every proxied connection and
   * the admin listener, and shuts the event loops down. Idempotent.
   */
  @Override
  public void close() {
    EventLoopGroup g;
    AdminServer a;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      g = group;
      a = admin;
    }
    source.close();
    runner.close(); // waits for a running sync, so listeners is stable from here on
    for (ServiceListener listener : listeners.values()) {
      listener.close();
    }
    listeners.clear();
    for (ProxiedConnection connection : new ArrayList<>(live)) {
      connection.close();
    }
    if (a != null) {
      a.close();
    }
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    log.info("Service proxy closed");
  }

  private void onState(Map<String, ServiceSpec> state) {
    desired = Map.copyOf(state);
    runner.run();
  }

  private HealthCheck.Result readiness() {
    return synced ? HealthCheck.Result.ok() : HealthCheck.Result.failed("no sync of the endpoint source yet");
  }

  /** The runner's function: brings listeners and balancers to the desired state in one pass. */
  private void sync() {
    Map<String, ServiceSpec> want = desired;
    if (want == null) {
      return; // the source has delivered nothing yet; the periodic run comes back
    }
    long started = time.ticker().nanoTime();
    boolean failed = false;
    for (Iterator<Map.Entry<String, ServiceListener>> it = listeners.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, ServiceListener> entry = it.next();
      ServiceSpec spec = want.get(entry.getKey());
      if (spec == null || !spec.listen().equals(entry.getValue().spec().listen())) {
        entry.getValue().close();
        it.remove();
        if (config.closeRemovedEndpointConnections()) {
          closeConnections(entry.getKey(), Set.of());
        }
      }
    }
    for (ServiceSpec spec : want.values()) {
      ServiceListener listener = listeners.get(spec.name());
      if (listener == null) {
        try {
          listener = ServiceListener.open(spec, context);
        } catch (IOException e) {
          log.warn("Sync: {}", e.getMessage());
          metrics.syncError();
          failed = true;
          continue;
        }
        listeners.put(spec.name(), listener);
      } else {
        listener.update(spec);
      }
      if (config.closeRemovedEndpointConnections()) {
        closeConnections(spec.name(), ServiceListener.endpointIds(spec));
      }
      listener.expireAffinity();
    }
    synced = true;
    metrics.synced(time.ticker().nanoTime() - started, listeners.size());
    if (failed) {
      runner.retryAfter(config.syncPeriod().dividedBy(2)); // a busy port may free up; try before the periodic run
    }
  }

  private void closeConnections(String service, Set<String> keep) {
    List<ProxiedConnection> doomed = new ArrayList<>();
    for (ProxiedConnection connection : live) {
      String endpoint = connection.endpointId();
      if (connection.service().equals(service) && endpoint != null && !keep.contains(endpoint)) {
        doomed.add(connection);
      }
    }
    for (ProxiedConnection connection : doomed) {
      log.debug("{}: closing a connection to removed endpoint {}", service, connection.endpointId());
      connection.close();
    }
  }
}
