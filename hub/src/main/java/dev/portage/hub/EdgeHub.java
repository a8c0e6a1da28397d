package dev.portage.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.admin.AdminRequest;
import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.ServerHttpCodec;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.net.TlsContexts;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.bootstrap.NodeCredentials;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.cache.CacheScope;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.codec.KubeTypes;
import dev.portage.hub.local.LocalProxy;
import dev.portage.hub.proxy.RequestInfoCache;
import dev.portage.hub.remote.ApiServer;
import dev.portage.hub.remote.RemoteProxy;
import dev.portage.hub.remote.Upstreams;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge hub: a reverse proxy on each edge node in front of the API servers (OpenYurt's YurtHub).
 * Node components talk to its proxy port; it balances over the healthy API servers, copies
 * cacheable answers to a disk cache as they stream, and answers from that cache while the cloud is
 * unreachable. Listeners: the plain proxy port, the TLS proxy port (when a server certificate is
 * configured), and the hub server port ({@code /v1/healthz}, {@code /v1/readyz}, {@code /metrics},
 * {@code POST /v1/token}).
 *
 * <p>{@link #start()} and {@link #close()} may be called from any thread but an event loop of the
 * hub; everything else is thread-safe.
 */
public final class EdgeHub implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(EdgeHub.class);

  /** Largest request body accepted (larger ones get 413). */
  private static final int MAX_REQUEST_BYTES = 32 * 1024 * 1024;

  /** Idle keep-alive connections kept per API server, at most. */
  private static final int MAX_IDLE_UPSTREAM_CONNECTIONS = 512;

  private final EdgeHubConfig config;
  private final CacheOpener cacheOpener;
  private final TimeSource time;
  private final PrometheusRegistry registry;
  private final ObjectMapper json = new ObjectMapper();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final RequestInfoCache requestInfos = new RequestInfoCache();
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final List<Channel> listeners = new ArrayList<>();
  private volatile String bootstrapToken;

  private EventLoopGroup group;
  private HttpClientPool pool;
  private ThreadPoolExecutor cacheWriter;
  private ThreadPoolExecutor cacheReader;
  private Upstreams upstreams;
  private LocalProxy local;
  private RemoteProxy remote;
  private DiskCache cache;
  private AdminServer hubServer;
  private NodeCredentials credentials; // resolved at start
  private volatile HubConfigMap configMap;
  private boolean started;
  private boolean closed;

  public EdgeHub(EdgeHubConfig config, TimeSource time, PrometheusRegistry registry) {
    this(config, time, registry, DiskCache::open);
  }

  /** Opens the disk cache; tests pass one whose file writes fail like a full disk. */
  @FunctionalInterface
  interface CacheOpener {
    DiskCache open(Path root) throws IOException;
  }

  EdgeHub(EdgeHubConfig config, TimeSource time, PrometheusRegistry registry,
      CacheOpener cacheOpener) {
    this.cacheOpener = Objects.requireNonNull(cacheOpener, "cacheOpener");
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.bootstrapToken = config.bootstrapToken();
  }

  /**
   * Opens the cache, starts health checks and binds the listeners.
   *
   * @throws IOException if the cache directory, a TLS file or a port cannot be used
   * @throws IllegalStateException if already started or closed
   */
  public synchronized EdgeHub start() throws IOException {
    if (started || closed) {
      throw new IllegalStateException(closed ? "hub is closed" : "hub already started");
    }
    started = true;
    try {
      doStart();
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
    return this;
  }

  private void doStart() throws IOException {
    credentials = NodeCredentials.resolve(new NodeCredentials.Flags(config.caFile(),
        config.clientCertFile(), config.clientKeyFile(), config.tlsCertFile(), config.tlsKeyFile(),
        config.bootstrapToken()), config.bootstrap());
    bootstrapToken = credentials.token();
    cache = cacheOpener.open(config.diskCachePath());
    ResponseCacher cacher = new ResponseCacher(cache, json, CacheScope.forNode(config.nodeName()));
    KubeCodec codec = new KubeCodec(json, KubeTypes.standard());
    CachePolicy policy = CachePolicy.NONE;
    if (config.workingMode().caches()) {
      Set<String> components = new HashSet<>(config.cacheAgents());
      if (!config.namespace().isEmpty()) {
        components.add(HubConfigMap.COMPONENT); // its reads of yurt-hub-cfg, for offline restarts
      }
      policy = new CachePolicy(components);
    }
    List<ApiServer> servers = config.serverAddrs().stream().map(ApiServer::parse).toList();

    group = NettyTransport.bestForHttp().newEventLoopGroup(2, "portage-hub");
    // Keep as many idle connections as requests may be in flight (bounded): with core's default of
    // 16, 50 busy clients closed and reopened an API server connection on most requests.
    HttpClientPool.Builder pb = HttpClientPool.builder(group, time)
        .maxIdlePerOrigin(Math.min(config.maxRequestsInFlight(), MAX_IDLE_UPSTREAM_CONNECTIONS));
    if (servers.get(0).tls()) {
      pb.sslContext(TlsContexts.client(credentials.caFile(), credentials.clientCertFile(),
          credentials.clientKeyFile()));
    }
    pool = pb.build();
    cacheWriter = executor("portage-hub-cache-writer", 1, 10_000);
    cacheReader = executor("portage-hub-cache-reader", 2, 1_000);

    upstreams = new Upstreams(servers, config.lbMode(), config.heartbeat(), pool, group, time,
        (endpoint, healthy) -> {
          log.info("API server {} is now {}", endpoint.id(), healthy ? "healthy" : "unhealthy");
          HubConfigMap cm = configMap;
          if (healthy && cm != null) {
            cm.read();
          }
        });
    local = new LocalProxy(cacher, policy, json, codec, time, upstreams::anyHealthy,
        config.minRequestTimeout(), RandomGenerator.getDefault(), cacheReader);
    remote = new RemoteProxy(pool, cacher, policy, cacheWriter, time.ticker(),
        () -> bootstrapToken);
    HubMetrics metrics = new HubMetrics(registry, upstreams, cache, local, inFlight::get,
        remote::uncachedResponses, remote::runningExchanges);
    upstreams.start();

    SslContext serverTls =
        credentials.serverCertFile() == null
            ? null
            : TlsContexts.server(credentials.serverCertFile(), credentials.serverKeyFile(), null);
    listeners.add(bind(config.proxyPort(), null, upstreams, remote, metrics));
    if (serverTls != null) {
      listeners.add(bind(config.proxySecurePort(), serverTls, upstreams, remote, metrics));
    }
    AdminServer.Builder server = AdminServer.builder()
        .bindAddress(config.bindAddress())
        .port(config.servePort())
        .registry(registry)
        .route("/v1/healthz", req -> AdminResponse.text(200, "OK"))
        .route("/v1/readyz", req -> AdminResponse.text(200, "OK"))
        .route("/v1/token", this::updateToken)
        .dashboard(DashboardState.COMPONENT, new DashboardState(config, upstreams, cache, local, inFlight::get))
        .wallClock(time.wall());
    if (config.profiling()) {
      ThreadDumps.addRoutes(server);
    }
    hubServer = server.build().start();
    if (policy.cachesAnything() && !config.namespace().isEmpty()) {
      configMap = new HubConfigMap(config.namespace(), proxyAddress(), policy, json, time,
          cacheReader);
      configMap.start();
    }
    log.info("Edge hub started: node {}{}, {} mode, proxy {}{}, hub server {}, {} API servers ({}),"
            + " cache {}{}; credentials: {}",
        config.nodeName().isEmpty() ? "(none)" : config.nodeName(),
        config.nodePoolName().isEmpty() ? "" : " in pool " + config.nodePoolName(),
        config.workingMode().name().toLowerCase(java.util.Locale.ROOT),
        listeners.get(0).localAddress(),
        serverTls != null ? ", secure proxy " + listeners.get(1).localAddress() : "",
        hubServer.localAddress(), servers.size(), config.lbMode(), cache.root(),
        policy.cachesAnything() ? "" : " (not cached: " + config.workingMode() + " mode)",
        credentials.sources());
  }

  private Channel bind(int port, SslContext tls, Upstreams upstreams, RemoteProxy remote,
      HubMetrics metrics) throws IOException {
    NettyTransport transport = NettyTransport.of(group);
    ChannelFuture f = new ServerBootstrap()
        .group(group)
        .channel(transport.serverChannelType())
        .childOption(ChannelOption.ALLOCATOR, transport.allocator())
        .childHandler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            connections.add(ch);
            if (tls != null) {
              ch.pipeline().addLast("tls", tls.newHandler(ch.alloc()));
            }
            ch.pipeline()
                .addLast("http", new ServerHttpCodec())
                .addLast("bodiless", new BodilessRequests())
                .addLast("aggregator", new HttpObjectAggregator(MAX_REQUEST_BYTES))
                .addLast("hub", new HubProxyHandler(upstreams, remote, local, metrics,
                    requestInfos, inFlight, config.maxRequestsInFlight()));
          }
        })
        .bind(config.proxyBindAddress(), port)
        .awaitUninterruptibly();
    if (!f.isSuccess()) {
      throw new IOException("hub: cannot bind " + config.proxyBindAddress() + ":" + port + ": "
          + f.cause().getMessage(), f.cause());
    }
    return f.channel();
  }

  private AdminResponse updateToken(AdminRequest request) {
    if (!request.method().equals("POST")) {
      return new AdminResponse(405, "text/plain; charset=utf-8",
          "method not allowed (expected: POST)\n".getBytes(), java.util.Map.of("Allow", "POST"));
    }
    String token;
    try {
      JsonNode body = json.readTree(request.body());
      token = body == null ? "" : body.path("token").asText("");
    } catch (IOException e) {
      token = "";
    }
    if (token.isEmpty() || token.chars().anyMatch(c -> c <= ' ' || c > '~')) {
      return AdminResponse.text(400,
          "bad token request (expected: a JSON body {\"token\": \"<bootstrap token>\"})\n");
    }
    bootstrapToken = token;
    log.info("Bootstrap token updated");
    return AdminResponse.text(200, "update bootstrap token successfully\n");
  }

  /** The address of the plain proxy port. */
  public synchronized InetSocketAddress proxyAddress() {
    return (InetSocketAddress) listener(0).localAddress();
  }

  /** The address of the TLS proxy port. */
  public synchronized InetSocketAddress secureProxyAddress() {
    return (InetSocketAddress) listener(1).localAddress();
  }

  /** The address of the hub server (healthz, readyz, metrics, token). */
  public synchronized InetSocketAddress serverAddress() {
    if (hubServer == null) {
      throw new IllegalStateException("hub not started");
    }
    return hubServer.localAddress();
  }

  /** Whether any API server is healthy now. */
  public boolean cloudHealthy() {
    return upstreams != null && upstreams.anyHealthy();
  }

  /** Open client connections to the proxy ports; for leak tests. */
  int openConnections() {
    return connections.size();
  }

  /** Bytes queued in the hub for clients that have not taken them yet; for backpressure tests. */
  long pendingWriteBytes() {
    long total = 0;
    for (Channel ch : connections) {
      var buffer = ch.unsafe().outboundBuffer();
      if (buffer != null) {
        total += buffer.totalPendingWriteBytes();
      }
    }
    return total;
  }

  /** Watches the local proxy is holding open. */
  int heldWatches() {
    return local == null ? 0 : local.heldWatches();
  }

  /** Exchanges with the API server running for connected clients; for leak tests. */
  int upstreamExchanges() {
    return remote == null ? 0 : remote.runningExchanges();
  }

  /** Non-long-running requests in flight now. */
  int inFlight() {
    return inFlight.get();
  }

  /** The token sent to API servers on requests without credentials. */
  String bootstrapToken() {
    return bootstrapToken;
  }

  private Channel listener(int i) {
    if (listeners.size() <= i) {
      throw new IllegalStateException("listener not started");
    }
    return listeners.get(i);
  }

  /** Closes listeners, connections, health checks and the cache writer. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Channel l : listeners) {
      l.close().awaitUninterruptibly();
    }
    if (hubServer != null) {
      hubServer.close();
    }
    if (configMap != null) {
      configMap.close();
    }
    if (local != null) {
      local.closeAll();
    }
    connections.close().awaitUninterruptibly();
    if (upstreams != null) {
      upstreams.close();
    }
    if (pool != null) {
      pool.close();
    }
    for (ThreadPoolExecutor e : new ThreadPoolExecutor[] {cacheWriter, cacheReader}) {
      if (e != null) {
        e.shutdown();
        try {
          if (!e.awaitTermination(5, TimeUnit.SECONDS)) {
            e.shutdownNow();
          }
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          e.shutdownNow();
        }
      }
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    log.info("Edge hub closed");
  }

  private static ThreadPoolExecutor executor(String name, int threads, int queue) {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(queue), r -> {
          Thread t = new Thread(r, name + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
