package dev.portage.tunnel.agent;

import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import dev.portage.core.admin.Profiling;
import dev.portage.tunnel.kube.KubeClients;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.netty.channel.EventLoopGroup;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Konnectivity-compatible proxy agent: connects out to every proxy server replica, dials backends
 * on the servers' behalf and relays their bytes, serves health and metrics. Built from a {@link
 * TunnelAgentConfig}; {@link #start()} once, {@link #drain()} on the first termination signal,
 * {@link #close()} on the second or at exit. Thread-safe.
 *
 * <table>
 *   <caption>Listeners</caption>
 *   <tr><th>port</th><th>paths</th></tr>
 *   <tr><td>{@code --health-server-port} (8093)</td><td>health only: {@code /healthz}, {@code /readyz}
 *       and {@code /ready} (check {@code server-connected})</td></tr>
 *   <tr><td>{@code --admin-server-port} (8094, loopback)</td><td>the health paths, {@code /metrics},
 *       {@code /dashboard}, {@code /status} (server connections and their open backend connections)</td></tr>
 * </table>
 */
public final class TunnelAgent implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TunnelAgent.class);

  /** Readiness check name on {@code /readyz}, as upstream reports it. */
  public static final String READY_CHECK = "server-connected";

  private final TunnelAgentConfig config;
  private final TimeSource time;
  private final PrometheusRegistry registry;
  private final AgentMetrics metrics;
  private final KubernetesClient givenKubeClient;

  private EventLoopGroup group; // guarded by this
  private ExecutorService blocking; // guarded by this
  private KubernetesClient ownKubeClient; // guarded by this
  private volatile ClientSet clients;
  private AdminServer health; // guarded by this
  private AdminServer admin; // guarded by this
  private Profiling profiling; // guarded by this
  private boolean started; // guarded by this
  private boolean closed; // guarded by this

  /**
   * @param config what to connect to and how
   * @param time ticker, wall clock and scheduler for the sync loop, probes and dial timeouts
   * @param registry where the agent's metrics are registered and served from
   */
  public TunnelAgent(TunnelAgentConfig config, TimeSource time, PrometheusRegistry registry) {
    this(config, time, registry, null);
  }

  /** As above, with the Kubernetes client used to count server leases (tests). */
  TunnelAgent(TunnelAgentConfig config, TimeSource time, PrometheusRegistry registry, KubernetesClient kube) {
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metrics = new AgentMetrics(registry);
    this.givenKubeClient = kube;
  }

  /**
   * Opens the health and admin listeners and starts connecting to the servers. Connecting is
   * asynchronous; readiness turns green once one server connection is up.
   *
   * @throws IOException if a listener cannot bind or the TLS files cannot be read
   * @throws IllegalStateException if already started or closed
   */
  public synchronized TunnelAgent start() throws IOException {
    if (started || closed) {
      throw new IllegalStateException(closed ? "agent is closed" : "agent already started");
    }
    started = true;
    try {
      NettyTransport transport = NettyTransport.best();
      group = transport.newEventLoopGroup(0, "portage-agent");
      blocking = Executors.newVirtualThreadPerTaskExecutor();
      AgentContext ctx = new AgentContext(
          config, time, metrics, group, transport.channelType(), AgentTls.clientContext(config), blocking);
      LeaseCounter leases = null;
      if (config.countServerLeases()) {
        KubernetesClient kube = givenKubeClient != null ? givenKubeClient : (ownKubeClient = kubeClient());
        leases = new LeaseCounter(kube, config.leaseNamespace(), config.leaseLabelSelector(), time.wall(),
            time.ticker(), blocking, metrics);
      }
      clients = new ClientSet(ctx, leases == null ? null : leases::count, new SplittableRandom());
      if (config.healthServerPort() >= 0) {
        String host = config.healthServerHost().isEmpty() ? "0.0.0.0" : config.healthServerHost();
        health = AdminServer.builder()
            .healthOnly()
            .bindAddress(host)
            .port(config.healthServerPort())
            .readinessCheck(READY_CHECK, this::serverConnected)
            .readinessAlsoAt("/ready")
            .timeSource(time)
            .build()
            .start();
      }
      if (config.adminServerPort() >= 0) {
        AdminServer.Builder adminBuilder = AdminServer.builder();
        if (config.enableProfiling()) {
          profiling = Profiling.start(config.enableContentionProfiling(), time.wall());
          profiling.addRoutes(adminBuilder);
        }
        admin = adminBuilder
            .bindAddress(config.adminBindAddress())
            .port(config.adminServerPort())
            .registry(registry)
            .readinessCheck(READY_CHECK, this::serverConnected)
            .readinessAlsoAt("/ready")
            .timeSource(time)
            .route("/status", request -> AdminResponse.text(200, status()))
            .dashboard(DashboardState.COMPONENT, new DashboardState(config, clients))
            .wallClock(time.wall())
            .build()
            .start();
      }
      clients.start();
      log.info("Agent {} started: connecting to {}:{} ({}), identifiers '{}'", config.agentId(),
          config.proxyServerHost(), config.proxyServerPort(), config.tls() ? "TLS" : "plaintext",
          config.agentIdentifiers());
      return this;
    } catch (IOException | RuntimeException e) {
      closeResources();
      closed = true;
      throw e;
    }
  }

  /** Lease counting's client, with client-go's default request rate (upstream's agent has no QPS flags). */
  private KubernetesClient kubeClient() throws IOException {
    return KubeClients.create(config.kubeconfig(), 0, 0, config.kubeApiContentType());
  }

  private HealthCheck.Result serverConnected() {
    ClientSet c = clients;
    return c != null && c.size() > 0
        ? HealthCheck.Result.ok()
        : HealthCheck.Result.failed("no servers connected");
  }

  private String status() {
    ClientSet c = clients;
    StringBuilder sb = new StringBuilder();
    sb.append("agent ").append(config.agentId()).append('\n');
    sb.append("target servers ").append(c == null ? 0 : c.targetServerCount()).append('\n');
    if (c != null) {
      for (ServerConnection s : c.connections()) {
        sb.append("server ").append(s.serverId())
            .append(" ready=").append(s.isReady())
            .append(" endpoints=").append(s.openEndpointConnections())
            .append(" pendingDials=").append(s.pendingDials())
            .append('\n');
      }
    }
    return sb.toString();
  }

  /**
   * Sends DRAIN to every server (and to servers connected later), so they stop choosing this agent
   * for new dials; established connections keep working.
   */
  public void drain() {
    ClientSet c = clients;
    if (c != null) {
      log.info("Agent {} draining", config.agentId());
      c.drain();
    }
  }

  /** Number of distinct proxy servers this agent holds a connection to. */
  public int connectedServers() {
    ClientSet c = clients;
    return c == null ? 0 : c.size();
  }

  /** Backend connections open across all server connections. */
  public int openEndpointConnections() {
    ClientSet c = clients;
    return c == null ? 0 : c.openEndpointConnections();
  }

  /**
   * Backend dials in flight (DIAL_REQ received, no DIAL_RSP sent yet) across all server connections;
   * for operators' status pages and tests that check nothing is left behind.
   */
  public int pendingDials() {
    ClientSet c = clients;
    return c == null ? 0 : c.pendingDials();
  }

  /** The health listener's bound address. @throws IllegalStateException if it is not running */
  public synchronized InetSocketAddress healthAddress() {
    if (health == null) {
      throw new IllegalStateException("health server not running");
    }
    return health.localAddress();
  }

  /** The admin listener's bound address. @throws IllegalStateException if it is not running */
  public synchronized InetSocketAddress adminAddress() {
    if (admin == null) {
      throw new IllegalStateException("admin server not running");
    }
    return admin.localAddress();
  }

  ClientSet clientSet() {
    return clients;
  }

  /** Closes every server and backend connection and both listeners. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeResources();
    log.info("Agent {} stopped", config.agentId());
  }

  private void closeResources() {
    if (clients != null) {
      clients.close(Duration.ofSeconds(10));
    }
    if (health != null) {
      health.close();
    }
    if (admin != null) {
      admin.close();
    }
    if (profiling != null) {
      profiling.close();
    }
    if (ownKubeClient != null) {
      ownKubeClient.close();
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    if (blocking != null) {
      blocking.shutdownNow();
    }
  }
}
