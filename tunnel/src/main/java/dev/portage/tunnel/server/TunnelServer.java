package dev.portage.tunnel.server;

import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.tunnel.internal.DirectPacketMarshaller;
import dev.portage.tunnel.internal.PacketMarshaller;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import dev.portage.core.time.TimeSource;
import io.fabric8.kubernetes.client.KubernetesClient;
import dev.portage.core.admin.AdminHandler;
import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.admin.Profiling;
import dev.portage.core.net.NettyTransport;
import io.grpc.Server;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Files;
import java.nio.file.Path;
import io.grpc.ServerServiceDefinition;
import dev.portage.core.net.TlsContexts;
import dev.portage.core.net.TlsOptions;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Konnectivity-compatible proxy server: agents connect to its agent listener ({@code
 * AgentService.Connect}); clients reach them through its frontend listener (gRPC {@code
 * ProxyService.Proxy} or HTTP {@code CONNECT}). Built from a {@link TunnelServerConfig}; {@link #start()}
 * binds every listener, {@link #close()} stops them. Thread-safe.
 */
public final class TunnelServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TunnelServer.class);
  static final String NOT_READY = "no connection to any proxy agent";
  /**
   * HTTP/2 window of an agent stream (gRPC's default is 1 MiB). One stream carries every connection of
   * that agent; per-connection credit, not this window, is what keeps one connection from hogging it.
   */
  static final int AGENT_STREAM_WINDOW = 8 << 20;
  /** Largest single socket read on an agent connection: one 256 KiB DATA packet and its frames. */
  static final int AGENT_STREAM_READ = 256 * 1024 + 1024;
  /** HTTP/2 window of a gRPC frontend stream (one connection each); gRPC's default is 1 MiB. */
  static final int FRONTEND_STREAM_WINDOW = 2 << 20;

  private final TunnelServerConfig config;
  private final TimeSource time;
  private final ScheduledExecutorService ownedScheduler;
  private final PrometheusRegistry registry;
  private final KubernetesClient kubernetes;
  private final DirectPacketMarshaller directMarshaller;
  private final ServerMetrics metrics;
  private final PacketRouter router;
  private final ExecutorService executor;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private Server agentServer;
  private Server grpcFrontendServer;
  private HttpConnectServer httpConnectServer;
  private AdminServer healthServer;
  private AdminServer adminServer;
  private final NettyTransport transport = NettyTransport.best();
  private final ByteBufAllocator allocator;
  private EventLoopGroup ioGroup;
  private boolean started;
  private boolean closed;

  private TunnelServer(Builder b) {
    this.config = b.config;
    this.allocator = b.allocator;
    this.directMarshaller = new DirectPacketMarshaller(b.allocator);
    if (b.timeSource == null) {
      // Header and dial timeouts are cancelled on almost every connection; this timer drops them.
      ownedScheduler = TimeSource.newTimer("portage-server-timer");
      time = TimeSource.system(ownedScheduler);
    } else {
      ownedScheduler = null;
      time = b.timeSource;
    }
    registry = b.registry != null ? b.registry : new PrometheusRegistry();
    kubernetes = b.kubernetes;
    metrics = new ServerMetrics(registry);
    router = new PacketRouter(
        new BackendRegistry(config.proxyStrategies(), metrics), new PendingDials(metrics), metrics, time,
        config.backendDialTimeout());
    // A cached pool that drops work arriving after close: gRPC transports still report closed
    // streams for a moment after the server terminated, and there is nothing left to do for them.
    executor = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
        daemon("portage-server"), new ThreadPoolExecutor.DiscardPolicy());
  }

  /** A builder for a server with {@code config}. */
  public static Builder builder(TunnelServerConfig config) {
    return new Builder(config);
  }

  /** Binds every listener; throws {@link UncheckedIOException} when one cannot bind (and closes the rest). */
  public synchronized TunnelServer start() {
    if (started) {
      throw new IllegalStateException("already started");
    }
    started = true;
    try {
      startAgentListener();
      if (config.mode() == FrontendMode.GRPC) {
        grpcFrontendServer = startGrpcFrontend(config.udsName(), config.serverPort());
      } else {
        startHttpConnectFrontend();
        if (config.grpcFrontendPort() >= 0) {
          grpcFrontendServer = startGrpcFrontend(null, config.grpcFrontendPort());
        }
      }
      if (config.enableLeaseController()) {
        LeaseController leases = new LeaseController(requireKubernetes("the lease controller"), time,
            config.leaseNamespace(), config.leaseLabels(), config.serverId(), metrics);
        closeables.add(leases);
        leases.start();
      }
      if (config.healthPort() >= 0) {
        healthServer = startHealth(config.healthBindAddress(), config.healthPort());
      }
      if (config.adminPort() >= 0) {
        adminServer = startAdmin(config.adminBindAddress(), config.adminPort());
      }
    } catch (IOException | RuntimeException e) {
      close();
      throw e instanceof IOException io ? new UncheckedIOException("tunnel server failed to start", io)
          : (RuntimeException) e;
    }
    log.info("tunnel server {} started: agents on {}, {} frontends on {}",
        config.serverId(), agentAddress(), config.mode().flagName(), frontendAddress());
    return this;
  }

  private void startAgentListener() throws IOException {
    AgentAuthenticator authenticator = AgentAuthenticator.NONE;
    if (config.agentTokenAuth() != null) {
      TokenReviewAuthenticator tokens = new TokenReviewAuthenticator(
          requireKubernetes("agent token authentication"), config.agentTokenAuth(), time, metrics);
      closeables.add(tokens);
      authenticator = tokens;
    }
    AgentStreamHandler handler = new AgentStreamHandler(
        config.serverId(), config.serverCount(), router, authenticator, metrics, config.flowControlWindow(),
        ioGroup());
    // DirectPacketMarshaller: same wire format; a received DATA payload lives in a pooled direct buffer
    // (no fresh zeroed array per packet) that HTTP CONNECT frontends write to their socket as is.
    ServerServiceDefinition service = ServerServiceDefinition.builder(AgentServiceGrpc.SERVICE_NAME)
        .addMethod(directMarshaller.forRequests(AgentServiceGrpc.getConnectMethod()), handler)
        .build();
    NettyServerBuilder nb = NettyServerBuilder.forAddress(inet(config.agentBindAddress(), config.agentPort()))
        .addService(service)
        .flowControlWindow(AGENT_STREAM_WINDOW)
        // Netty reads at most 64 KiB per read by default: a 256 KiB DATA packet took four reads and
        // event-loop rounds; read up to a whole packet at once.
        .withChildOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 8192, AGENT_STREAM_READ))
        .withChildOption(ChannelOption.ALLOCATOR, allocator)
        .permitKeepAliveTime(30, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        // Nothing on the agent stream blocks (routing only queues onto frontends; a TokenReview runs on
        // the authenticator's threads), so its callbacks run on the transport thread: one thread hop less
        // on every packet and dial. The transport runs on the frontends' loops, so frontends can be
        // placed on their agent's loop.
        .directExecutor()
        .bossEventLoopGroup(ioGroup())
        .workerEventLoopGroup(ioGroup())
        .channelType(transport.serverChannelType());
    keepalive(nb, config.keepaliveTime());
    if (config.agentTls() != null) {
      nb.sslContext(grpcTls(config.agentTls()));
    }
    agentServer = nb.build().start();
  }

  private Server startGrpcFrontend(Path udsName, int port) throws IOException {
    ProxyStreamHandler handler = new ProxyStreamHandler(
        router, metrics, time.ticker(), executor, config.connectionQueueBytes(), config.xfrChannelSize(), ioGroup());
    ServerServiceDefinition service = ServerServiceDefinition.builder(ProxyServiceGrpc.SERVICE_NAME)
        // Responses: queued DATA payloads stay in the agent link's receive buffers until gRPC frames them.
        .addMethod(directMarshaller.forResponses(ProxyServiceGrpc.getProxyMethod()), handler)
        .build();
    NettyServerBuilder nb;
    if (udsName != null) {
      prepareUds(udsName);
      nb = NettyServerBuilder.forAddress(transport.domainSocketAddress(udsName))
          .channelType(transport.serverDomainSocketChannelType());
    } else {
      nb = NettyServerBuilder.forAddress(inet(config.serverBindAddress(), port))
          .channelType(transport.serverChannelType());
    }
    // A client connection is registered on an agent stream's loop when there is one (AgentAffinityGroup),
    // where its streams' GrpcFrontends run too: no thread hop inside the server for a tunnel through
    // that agent. The group is only a view of ioGroup, which outlives the gRPC server.
    nb.bossEventLoopGroup(ioGroup()).workerEventLoopGroup(new AgentAffinityGroup(ioGroup(), router.backends()::preferredLoop));
    // GrpcFrontend hands every callback to its own SerialExecutor at once, so the transport thread may
    // call it directly: one thread hop less per packet.
    nb.addService(service).directExecutor().flowControlWindow(FRONTEND_STREAM_WINDOW)
        .withChildOption(ChannelOption.ALLOCATOR, allocator);
    keepalive(nb, config.frontendKeepaliveTime());
    if (config.frontendTls() != null) {
      nb.sslContext(grpcTls(config.frontendTls()));
    }
    return nb.build().start();
  }

  private void startHttpConnectFrontend() throws IOException {
    HttpConnectFrontend.Factory frontends = new HttpConnectFrontend.Factory(
        router, metrics, config.connectionQueueBytes(), config.xfrChannelSize());
    SslContext tls = null;
    if (config.frontendTls() != null) {
      // Owned (reference-counted) so each connection's engine is freed when it closes, not finalized.
      tls = TlsContexts.resumeSessions(TlsContexts.ownedServer(
          config.frontendTls().cert(), config.frontendTls().key(), config.frontendTls().clientCa(), tlsOptions()));
      SslContext owned = tls;
      closeables.add(() -> ReferenceCountUtil.release(owned)); // after the listener: closeables close in reverse
    }
    httpConnectServer = HttpConnectServer.start(
        ioGroup(), transport, inet(config.serverBindAddress(), config.serverPort()), config.udsName(),
        config.deleteExistingUdsFile(), tls, frontends, time, config.headerReadTimeout(), metrics,
        router.backends()::preferredLoop, config.maxPendingHeads());
    closeables.add(httpConnectServer);
  }

  /**
   * The health listener (all interfaces by default, like upstream's) answers health questions only:
   * {@code /healthz}, {@code /readyz}, {@code /ready}. Metrics and the dashboard are on the admin
   * listener (loopback by default). Readiness has upstream's exact bodies, so it is a route rather than
   * the admin server's check summary.
   */
  private AdminServer startHealth(String host, int port) throws IOException {
    return startAdminServer(AdminServer.builder().healthOnly().eventLoopGroup(ioGroup()), host, port);
  }

  /**
   * The admin listener: health paths, {@code /metrics}, {@code /dashboard}, and with profiling on
   * {@code /debug/pprof/}. It runs on a thread of its own (the health listener shares the tunnels'
   * loops): a profile or a large scrape never holds up a tunnel.
   */
  private AdminServer startAdmin(String host, int port) throws IOException {
    AdminServer.Builder builder = AdminServer.builder()
        .registry(registry)
        .readinessCheck("proxy-agents", () -> router.backends().ready()
            ? HealthCheck.Result.ok() : HealthCheck.Result.failed(NOT_READY))
        .dashboard(DashboardState.COMPONENT, new DashboardState(config, router));
    if (config.enableProfiling()) {
      Profiling profiling = Profiling.start(config.enableContentionProfiling(), time.wall());
      closeables.add(profiling);
      profiling.addRoutes(builder);
    }
    return startAdminServer(builder, host, port);
  }

  private AdminServer startAdminServer(AdminServer.Builder builder, String host, int port) throws IOException {
    AdminHandler readiness = request -> router.backends().ready()
        ? AdminResponse.text(200, "ok")
        : AdminResponse.text(500, NOT_READY);
    AdminServer server = builder
        .bindAddress(host.isEmpty() ? "0.0.0.0" : host)
        .port(port)
        .timeSource(time)
        .wallClock(time.wall())
        .route("/healthz", request -> AdminResponse.text(200, "ok"))
        .route("/readyz", readiness)
        .route("/ready", readiness)
        .build()
        .start();
    closeables.add(server);
    return server;
  }

  private void prepareUds(Path path) throws IOException {
    if (Files.exists(path)) {
      if (!config.deleteExistingUdsFile()) {
        throw new IOException("unix socket " + path + " exists (use --delete-existing-uds-file to replace it)");
      }
      Files.delete(path);
    }
    closeables.add(() -> Files.deleteIfExists(path));
  }

  private EventLoopGroup ioGroup() {
    if (ioGroup == null) {
      ioGroup = transport.newEventLoopGroup(0, "portage-server-io");
    }
    return ioGroup;
  }

  private KubernetesClient requireKubernetes(String what) {
    if (kubernetes == null) {
      throw new IllegalStateException(what + " needs a Kubernetes client (expected: Builder.kubernetesClient(...))");
    }
    return kubernetes;
  }

  private TlsOptions tlsOptions() {
    TlsOptions options = TlsOptions.defaults().withCipherSuites(config.cipherSuites())
        .withKeyExchangeGroups(config.keyExchangeGroups());
    return config.tlsMinVersion() == null ? options : options.withMinVersion(config.tlsMinVersion());
  }

  /**
   * A gRPC (HTTP/2, ALPN h2) server context; with a client CA, client certificates are required.
   * Clients may resume their sessions (a gRPC frontend that opens a connection per dial, as
   * konnectivity-client does, skips the certificate exchange on every dial but the first).
   */
  private SslContext grpcTls(TlsFiles files) throws IOException {
    TlsOptions options = tlsOptions();
    SslContextBuilder b = TlsContexts.serverBuilder(files.cert(), files.key(), files.clientCa(), options);
    return TlsContexts.resumeSessions(TlsContexts.withKeyExchangeGroups(
        GrpcSslContexts.configure(b, TlsContexts.provider()).build(), options));
  }

  private static void keepalive(NettyServerBuilder nb, Duration d) {
    if (!d.isZero()) {
      nb.keepAliveTime(d.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private static InetSocketAddress inet(String host, int port) {
    return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
  }

  /** The health listener ({@code /healthz}, {@code /readyz}, {@code /ready}), or null when off. */
  public InetSocketAddress healthAddress() {
    return healthServer == null ? null : healthServer.localAddress();
  }

  /** The admin listener (health paths, {@code /metrics}, {@code /dashboard}), or null when off. */
  public InetSocketAddress adminAddress() {
    return adminServer == null ? null : adminServer.localAddress();
  }

  /** Where agents connect. */
  public InetSocketAddress agentAddress() {
    return agentServer == null ? null : (InetSocketAddress) agentServer.getListenSockets().get(0);
  }

  /** Where frontends of the configured mode connect (a TCP address, or the Unix socket's address). */
  public SocketAddress frontendAddress() {
    if (httpConnectServer != null) {
      return httpConnectServer.localAddress();
    }
    return grpcFrontendServer == null ? null : grpcFrontendServer.getListenSockets().get(0);
  }

  /** The gRPC frontend in grpc mode, or the extra one in http-connect mode; null when there is none. */
  public InetSocketAddress grpcFrontendAddress() {
    return grpcFrontendServer != null && grpcFrontendServer.getListenSockets().get(0) instanceof InetSocketAddress a
        ? a : null;
  }

  /** The frontend TCP port, or -1 on a Unix socket. */
  public int serverPort() {
    return frontendAddress() instanceof InetSocketAddress a ? a.getPort() : -1;
  }

  public int agentPort() {
    return agentAddress().getPort();
  }

  /** True while the first proxy strategy has an agent to pick. */
  public boolean ready() {
    return router.backends().ready();
  }

  public TunnelServerConfig config() {
    return config;
  }

  /** The server's routing state; package-private for tests that check maps empty out. */
  PacketRouter router() {
    return router;
  }

  /** Stops every listener (waiting up to the graceful shutdown timeout) and the server's threads. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    Duration grace = config.gracefulShutdownTimeout();
    for (Server s : new Server[] {grpcFrontendServer, agentServer}) {
      if (s != null) {
        s.shutdown();
      }
    }
    for (Server s : new Server[] {grpcFrontendServer, agentServer}) {
      if (s != null) {
        try {
          if (grace.isZero() || !s.awaitTermination(grace.toNanos(), TimeUnit.NANOSECONDS)) {
            s.shutdownNow();
          }
          s.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          s.shutdownNow();
        }
      }
    }
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        log.warn("closing {} failed", closeables.get(i), e);
      }
    }
    if (ioGroup != null) {
      ioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
    executor.shutdown();
    if (ownedScheduler != null) {
      ownedScheduler.shutdownNow();
    }
    log.info("tunnel server {} stopped", config.serverId());
  }

  static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** Collects a server's collaborators; not thread-safe. */
  public static final class Builder {
    private final TunnelServerConfig config;
    private TimeSource timeSource;
    private PrometheusRegistry registry;
    private KubernetesClient kubernetes;
    private ByteBufAllocator allocator = ByteBufAllocator.DEFAULT;

    private Builder(TunnelServerConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    /** Clock and timers; by default real time with a scheduler the server owns. */
    public Builder timeSource(TimeSource t) {
      timeSource = t;
      return this;
    }

    /** Where metrics go; by default a registry of the server's own. */
    public Builder registry(PrometheusRegistry r) {
      registry = r;
      return this;
    }

    /** Kubernetes API access for token reviews and leases; required only when those are on. */
    public Builder kubernetesClient(KubernetesClient k) {
      kubernetes = k;
      return this;
    }

    /**
     * Buffers of the gRPC connections (agent link and gRPC frontend) and of the messages received from
     * agents (tests count what stays allocated). By default Netty's adaptive pool, which the HTTP CONNECT
     * sockets use too, instead of grpc-netty's private {@code PooledByteBufAllocator}: one pool for all
     * of the server's buffers (docs/benchmarks-tunnel.md).
     */
    Builder allocator(ByteBufAllocator a) {
      allocator = Objects.requireNonNull(a, "allocator");
      return this;
    }

    public TunnelServer build() {
      return new TunnelServer(this);
    }
  }
}
