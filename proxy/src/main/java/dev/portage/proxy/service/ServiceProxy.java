package dev.portage.proxy.service;

import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.ratelimit.BoundedFrequencyRunner;
import dev.portage.core.time.TimeSource;
import dev.portage.proxy.service.model.ClusterSnapshot;
import dev.portage.proxy.service.model.Protocol;
import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import dev.portage.proxy.service.nftables.Conntrack;
import dev.portage.proxy.service.nftables.NftException;
import dev.portage.proxy.service.nftables.Nft;
import dev.portage.proxy.service.nftables.NftablesProxier;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.concurrent.atomic.AtomicLong;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.NetUtil;
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
 * kube-proxy-style service proxy with two data planes behind one sync loop. Every change from the
 * source asks one {@link BoundedFrequencyRunner} for a sync ({@code syncBurst} back to back, then one
 * per {@code minSyncPeriod}):
 *
 * <ul>
 *   <li>{@code nftables} (Kubernetes source): the sync programs the kernel through {@link
 *       NftablesProxier}; traffic to a ClusterIP, NodePort, external or LB IP is DNATed to an
 *       endpoint and never passes through this process. The table is rewritten whole at start and
 *       every {@code fullSyncPeriod}, in between only where Services changed.
 *   <li>{@code userspace}: one TCP listener per Service port, each accepted connection relayed to an
 *       endpoint chosen by the service's balancer. With the Kubernetes source the listeners take
 *       ports of their own and nftables redirects each Service address to its listener, so Services
 *       sharing a port do not collide; with a file or the Destination API the file names the
 *       listen addresses.
 * </ul>
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
  private final EndpointSource source; // null with the Kubernetes source
  private final KubernetesServiceSource cluster; // null without it
  private final NftablesProxier kernel; // null when no nftables rules are programmed
  private final KubeProxyMetrics kubeMetrics;
  private final ProxyHealth health;
  private final AtomicLong changes = new AtomicLong();
  /** Trigger times already observed for the network programming metric, by port id; sync only. */
  private final Map<String, Instant> observedTriggers = new HashMap<>();
  private long lastFullSync; // ticker time; sync only
  private volatile ClusterSnapshot applied; // the last snapshot a sync applied
  private final Set<ProxiedConnection> live = ConcurrentHashMap.newKeySet();
  /** Written by the sync only (serialised by the runner); read by accessors. */
  private final Map<String, ServiceListener> listeners = new ConcurrentHashMap<>();
  private final BoundedFrequencyRunner runner;

  private volatile Map<String, ServiceSpec> desired;
  private volatile boolean synced;
  private EventLoopGroup group; // guarded by this
  private ListenerContext context; // set by start(), read by the sync
  private AdminServer admin; // guarded by this
  private AdminServer healthServer; // guarded by this
  private boolean started; // guarded by this
  private boolean closed; // guarded by this

  /** A proxy over the endpoint source {@code config} names. Nothing runs until {@link #start()}. */
  public ServiceProxy(ServiceProxyConfig config, TimeSource time, PrometheusRegistry registry) {
    this(config, (EndpointSource) null, time, registry);
  }

  /** A proxy over {@code source} (tests), or over the source {@code config} names when null. */
  ServiceProxy(
      ServiceProxyConfig config, EndpointSource source, TimeSource time, PrometheusRegistry registry) {
    this(config, source, null, time, registry);
  }

  /** A proxy over the Kubernetes source {@code cluster} (tests). */
  ServiceProxy(
      ServiceProxyConfig config, KubernetesServiceSource cluster, TimeSource time, PrometheusRegistry registry) {
    this(config, null, cluster, time, registry);
  }

  private ServiceProxy(
      ServiceProxyConfig config, EndpointSource source, KubernetesServiceSource cluster, TimeSource time,
      PrometheusRegistry registry) {
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metrics = new ServiceProxyMetrics(registry);
    this.kubeMetrics = new KubeProxyMetrics(registry);
    this.health = new ProxyHealth(time.ticker(), time.wall(), config.syncPeriod(), kubeMetrics);
    if (config.kubernetes()) {
      this.source = null;
      this.cluster = cluster != null ? cluster : kubernetesSource(config);
      boolean program = config.proxyMode() == ProxyMode.NFTABLES || config.kernelRules();
      this.kernel = program
          ? new NftablesProxier(config.nftables(), new Nft(config.nftCommand()),
              config.proxyMode() == ProxyMode.NFTABLES ? new Conntrack(config.conntrackCommand()) : null,
              time.ticker())
          : null;
    } else {
      this.source = source != null ? source : EndpointSource.fromConfig(config, time, metrics::sourceError);
      this.cluster = null;
      this.kernel = null;
    }
    // In nftables mode nothing needs re-checking between changes: kube-proxy's runner wakes up once
    // per full-sync period on its own; syncPeriod is the retry delay after a failure.
    Duration maxInterval = config.proxyMode() == ProxyMode.NFTABLES ? config.fullSyncPeriod() : config.syncPeriod();
    this.runner =
        new BoundedFrequencyRunner(
            "service-proxy-sync", this::sync, config.minSyncPeriod(), maxInterval,
            config.syncBurst(), time);
    this.lastFullSync = time.ticker().nanoTime();
  }

  private static KubernetesServiceSource kubernetesSource(ServiceProxyConfig config) {
    try {
      return KubernetesServiceSource.fromKubeconfig(config.kubeconfig(), config.hostname());
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "kubeconfig: " + config.kubeconfig() + ": cannot read: " + e.getMessage(), e);
    }
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
      if (cluster != null) {
        cluster.start(this::onClusterChange);
      } else {
        source.start(this::onState);
      }
      runner.start();
      if (config.adminPort() >= 0) {
        AdminServer server =
            AdminServer.builder()
                .bindAddress(config.adminBindAddress())
                .port(config.adminPort())
                .registry(registry)
                .readinessCheck("sync", this::readiness)
                .dashboard(DashboardState.COMPONENT, new DashboardState(this))
                .route("/proxyMode", request -> AdminResponse.text(200, config.proxyMode().flag()))
                .wallClock(time.wall())
                .build();
        synchronized (this) {
          admin = server;
        }
        server.start();
      }
      if (config.healthzPort() >= 0) {
        AdminServer server =
            AdminServer.builder()
                .bindAddress(config.healthzBindAddress())
                .port(config.healthzPort())
                .registry(registry)
                .route("/healthz", request -> health.healthz())
                .route("/livez", request -> health.livez())
                .wallClock(time.wall())
                .build();
        synchronized (this) {
          healthServer = server;
        }
        server.start();
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
    log.info("Service proxy started (mode {}, {}, min sync {}, sync {})",
        config.proxyMode().flag(), cluster != null ? cluster : source, config.minSyncPeriod(), config.syncPeriod());
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
   * kube-proxy's health listener's bound address.
   *
   * @throws IllegalStateException if it is disabled or not started
   */
  public synchronized InetSocketAddress healthzAddress() {
    if (healthServer == null) {
      throw new IllegalStateException("health listener not running");
    }
    return healthServer.localAddress();
  }

  /** The Service ports the last successful sync applied (empty before one). */
  public Set<String> servicePorts() {
    ClusterSnapshot snapshot = applied;
    return snapshot == null ? Set.of() : new TreeSet<>(snapshot.ports().keySet());
  }

  /** How many Service ports the last successful sync applied (0 before one, and without Kubernetes). */
  int servicePortCount() {
    ClusterSnapshot snapshot = applied;
    return snapshot == null ? 0 : snapshot.ports().size();
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
    AdminServer h;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      g = group;
      a = admin;
      h = healthServer;
    }
    if (cluster != null) {
      cluster.close();
    } else {
      source.close();
    }
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
    if (h != null) {
      h.close();
    }
    if (g != null) {
      g.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    log.info("Service proxy closed");
  }

  private void onState(Map<String, ServiceSpec> state) {
    desired = Map.copyOf(state);
    changes.incrementAndGet();
    health.queued();
    runner.run();
  }

  private void onClusterChange() {
    changes.incrementAndGet();
    health.queued();
    runner.run();
  }

  private HealthCheck.Result readiness() {
    return synced ? HealthCheck.Result.ok() : HealthCheck.Result.failed("no sync of the endpoint source yet");
  }

  /** The runner's function: brings the data plane to the source's state in one pass. */
  private void sync() {
    long seen = changes.get();
    long started = time.ticker().nanoTime();
    if (cluster != null) {
      syncCluster(seen, started);
      return;
    }
    Map<String, ServiceSpec> want = desired;
    if (want == null) {
      return; // the source has delivered nothing yet; the periodic run comes back
    }
    boolean failed = syncListeners(want, started);
    kubeMetrics.synced(false, time.ticker().nanoTime() - started, time.wall().instant().toEpochMilli() / 1000.0);
    health.applied(started, changes.get() != seen);
    if (failed) {
      runner.retryAfter(config.syncPeriod().dividedBy(2)); // a busy port may free up; try before the periodic run
    }
  }

  /** One sync with the Kubernetes source: listeners (userspace), then the kernel's table. */
  private void syncCluster(long seen, long started) {
    ClusterSnapshot snapshot = cluster.snapshot();
    if (snapshot == null) {
      return; // informers not synced yet: kube-proxy writes no rules before both have listed
    }
    Map<String, Integer> redirects = null;
    boolean failed = false;
    if (config.proxyMode() == ProxyMode.USERSPACE) {
      failed = syncListeners(userspaceSpecs(snapshot), started);
      redirects = new HashMap<>();
      for (Map.Entry<String, ServiceListener> entry : listeners.entrySet()) {
        redirects.put(entry.getKey(), entry.getValue().localAddress().getPort());
      }
    }
    boolean fullSync = false;
    if (kernel != null) {
      if (time.ticker().nanoTime() - lastFullSync >= config.fullSyncPeriod().toNanos()) {
        kernel.requireFullSync();
      }
      try {
        NftablesProxier.SyncResult result = kernel.sync(snapshot, redirects);
        fullSync = result.full();
        if (result.full()) {
          lastFullSync = time.ticker().nanoTime();
        }
        if (result.applied()) {
          metrics.nftApplied(result.nftNanos());
          log.debug("Sync: {} ({} Service ports changed, {} commands) in {} ms, nft {} ms",
              result.full() ? "full" : "partial", result.changedPorts(), result.commands(),
              (time.ticker().nanoTime() - started) / 1_000_000, result.nftNanos() / 1_000_000);
        }
      } catch (NftException e) {
        kubeMetrics.syncFailed();
        log.warn("Sync failed, retrying in {} with a full resync: {}", config.syncPeriod(), e.getMessage());
        runner.retryAfter(config.syncPeriod());
        return; // not applied: health keeps counting from the oldest pending change
      }
    }
    kubeMetrics.synced(fullSync, time.ticker().nanoTime() - started, time.wall().instant().toEpochMilli() / 1000.0);
    applied = snapshot;
    synced = true;
    observeProgramming(snapshot);
    metrics.synced(time.ticker().nanoTime() - started, listeners.size());
    health.applied(started, changes.get() != seen);
    if (failed) {
      runner.retryAfter(config.syncPeriod().dividedBy(2));
    }
  }

  /** kube-proxy's network programming latency: trigger time of an endpoint change to programmed. */
  private void observeProgramming(ClusterSnapshot snapshot) {
    Instant now = time.wall().instant();
    snapshot.changeTriggers().forEach((id, trigger) -> {
      Instant seen = observedTriggers.put(id, trigger);
      if (seen == null || trigger.isAfter(seen)) {
        kubeMetrics.programmed(Duration.between(trigger, now));
      }
    });
    observedTriggers.keySet().retainAll(snapshot.changeTriggers().keySet());
  }

  /**
   * The relay's services for a snapshot: one per TCP Service port, listening on a port of its own
   * (0: the kernel picks) on the bind address, over the endpoints in-cluster traffic may use.
   */
  private Map<String, ServiceSpec> userspaceSpecs(ClusterSnapshot snapshot) {
    InetAddress host;
    try {
      host = InetAddress.getByName(config.bindAddress());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("bindAddress: " + config.bindAddress() + " (unknown host)", e);
    }
    Map<String, ServiceSpec> specs = new HashMap<>();
    for (ServicePort port : snapshot.ports().values()) {
      if (port.protocol() != Protocol.TCP) {
        continue; // the relay is TCP only; UDP and SCTP need --proxy-mode nftables
      }
      List<InetSocketAddress> endpoints = new ArrayList<>();
      for (ServiceEndpoint endpoint : port.internalEndpoints()) {
        InetAddress ip = NetUtil.createInetAddressFromIpAddressString(endpoint.ip()); // no DNS lookup
        if (ip == null) {
          throw new IllegalArgumentException("ip: " + endpoint.ip() + " (expected: an IP address)");
        }
        endpoints.add(new InetSocketAddress(ip, endpoint.port()));
      }
      specs.put(port.id(), new ServiceSpec(port.id(), new InetSocketAddress(host, 0), endpoints,
          BalancerKind.ROUND_ROBIN, port.affinityTimeout(), null));
    }
    return specs;
  }

  /**
   * Opens, closes and updates listeners to match {@code want}.
   *
   * @return whether some listener could not be opened
   */
  private boolean syncListeners(Map<String, ServiceSpec> want, long started) {
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
    if (cluster == null) {
      synced = true;
      metrics.synced(time.ticker().nanoTime() - started, listeners.size());
    }
    return failed;
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
