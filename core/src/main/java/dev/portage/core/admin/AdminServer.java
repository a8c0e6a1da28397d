package dev.portage.core.admin;

import dev.portage.core.net.ConnectionLimit;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP/1.1 listener every component runs: Kubernetes-style {@code /healthz}, {@code
 * /livez} and {@code /readyz}, Prometheus {@code /metrics}, a live {@code /dashboard} of the
 * component's {@link DashboardSource}, and component routes such as a status page. Health checks and handlers run on the server's event loop and must not block.
 * A health listener ({@link Builder#healthOnly()}) serves only the health paths and its own routes.
 *
 * <p>Hardened against clients that hold connections: at most {@link Builder#maxConnections} (100) are
 * open at once (more are closed at accept), and a connection that has not delivered a whole request
 * {@link Builder#requestReadTimeout} (10 s) after the server started waiting for one (the accept, or the
 * previous response) is closed.
 *
 * <p>{@link #start()} and {@link #close()} may be called from any thread except an event loop of
 * this server (they wait for the bind and the unbind).
 */
public final class AdminServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

  /** Admin requests are small; anything larger is refused with 413 by the aggregator. */
  private static final int MAX_REQUEST_BYTES = 64 * 1024;

  // The dashboard's files are the same for every server: read from the jar once.
  private static final StaticAsset DASHBOARD_PAGE =
      new StaticAsset("dashboard.html", "text/html; charset=utf-8");
  private static final StaticAsset DASHBOARD_SCRIPT =
      new StaticAsset("dashboard.js", "text/javascript; charset=utf-8");
  private static final StaticAsset DASHBOARD_STYLE =
      new StaticAsset("dashboard.css", "text/css; charset=utf-8");

  private final String host;
  private final int port;
  private final boolean ownsGroup;
  private final TimeSource time;
  private final Duration requestReadTimeout;
  private final ConnectionLimit limit;
  private final AdminHttpHandler handler;
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

  private EventLoopGroup group; // guarded by this; created by start() unless given
  private Channel serverChannel; // guarded by this
  private boolean started; // guarded by this
  private boolean closed; // guarded by this

  /** Read by accepted channels racing with close(): either close() sees them or they see this. */
  private volatile boolean closing;

  private AdminServer(Builder builder) {
    this.host = builder.host;
    this.port = builder.port;
    this.ownsGroup = builder.group == null;
    this.group = builder.group;
    this.time = builder.time;
    this.requestReadTimeout = builder.requestReadTimeout;
    this.limit = new ConnectionLimit("admin listener on " + builder.host + ":" + builder.port, builder.maxConnections);
    this.handler = new AdminHttpHandler(routes(builder));
  }

  private static Map<String, AdminHttpHandler.Route> routes(Builder builder) {
    Map<String, AdminHttpHandler.Route> routes = new TreeMap<>();
    routes.put("/healthz", builtIn(new HealthEndpoint("healthz", builder.livenessChecks)));
    routes.put("/livez", builtIn(new HealthEndpoint("livez", builder.livenessChecks)));
    routes.put("/readyz", builtIn(new HealthEndpoint("readyz", builder.readinessChecks)));
    for (String alias : builder.readinessAliases) {
      routes.put(alias, builtIn(new HealthEndpoint("readyz", builder.readinessChecks)));
    }
    if (builder.healthOnly) {
      builder.routes.forEach((path, route) -> routes.put(path, new AdminHttpHandler.Route(route, false)));
      return routes;
    }
    routes.put("/metrics", builtIn(new MetricsEndpoint(builder.registry)));
    routes.put("/dashboard", builtIn(DASHBOARD_PAGE));
    routes.put("/dashboard/app.js", builtIn(DASHBOARD_SCRIPT));
    routes.put("/dashboard/app.css", builtIn(DASHBOARD_STYLE));
    routes.put(
        "/dashboard/state",
        builtIn(
            new DashboardStateEndpoint(
                builder.dashboardComponent,
                builder.dashboardSource,
                builder.readinessChecks,
                builder.wall)));
    routes.put("/", null); // placeholder so the index lists itself
    builder.routes.forEach(
        (path, route) -> routes.put(path, new AdminHttpHandler.Route(route, false)));
    if (routes.get("/") == null) {
      String index = String.join("\n", routes.keySet()) + "\n";
      routes.put("/", builtIn(request -> AdminResponse.text(200, index)));
    }
    return routes;
  }

  private static AdminHttpHandler.Route builtIn(AdminHandler handler) {
    return new AdminHttpHandler.Route(handler, true);
  }

  /** A builder with the defaults: {@code 127.0.0.1}, ephemeral port, the default registry. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Binds the listener.
   *
   * @return this server
   * @throws IOException if the address cannot be bound
   * @throws IllegalStateException if already started or closed
   */
  public AdminServer start() throws IOException {
    ChannelFuture bind;
    synchronized (this) {
      if (closed || started) {
        throw new IllegalStateException(
            closed ? "admin server is closed" : "admin server already started");
      }
      started = true;
      if (ownsGroup) {
        group = NettyTransport.best().newEventLoopGroup(1, "portage-admin");
      }
      ScheduledExecutorService timers = time != null ? time.scheduler() : group;
      bind =
          new ServerBootstrap()
              .group(group)
              .channel(NettyTransport.of(group).serverChannelType())
              .childHandler(
                  new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      if (limit.admit(ch) == null) {
                        ch.close();
                        return;
                      }
                      connections.add(ch);
                      if (closing) {
                        ch.close();
                        return;
                      }
                      ch.pipeline()
                          .addLast(new HttpServerCodec())
                          .addLast(new HttpServerKeepAliveHandler())
                          .addLast(new HttpObjectAggregator(MAX_REQUEST_BYTES))
                          .addLast(new RequestReadTimeout(timers, requestReadTimeout))
                          .addLast(handler);
                    }
                  })
              .bind(host, port)
              .awaitUninterruptibly();
      serverChannel = bind.isSuccess() ? bind.channel() : null;
    }
    if (!bind.isSuccess()) {
      close();
      Throwable cause = bind.cause();
      throw new IOException(
          "admin server: cannot bind " + host + ":" + port + ": " + cause.getMessage(), cause);
    }
    log.info("Admin server listening on {}", localAddress());
    return this;
  }

  /**
   * The bound address, with the real port when {@code port(0)} was asked for.
   *
   * @throws IllegalStateException if not started
   */
  public synchronized InetSocketAddress localAddress() {
    if (serverChannel == null) {
      throw new IllegalStateException("admin server not started");
    }
    return (InetSocketAddress) serverChannel.localAddress();
  }

  /**
   * Unbinds, closes open connections and shuts down the server's own event loop group. Idempotent.
   */
  @Override
  public void close() {
    Channel channel;
    EventLoopGroup ownGroup;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      closing = true;
      channel = serverChannel;
      ownGroup = ownsGroup ? group : null;
    }
    if (channel != null) {
      channel.close().awaitUninterruptibly();
    }
    connections.close().awaitUninterruptibly();
    if (ownGroup != null) {
      ownGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    if (channel != null) {
      log.info("Admin server on {} closed", channel.localAddress());
    }
  }

  /** Number of accepted connections still open; for tests of connection cleanup. */
  int openConnections() {
    return connections.size();
  }

  /** Connections closed at accept because {@link Builder#maxConnections} were open, since start. */
  public long refusedConnections() {
    return limit.refused();
  }

  /** Options of an {@link AdminServer}; not thread-safe. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private PrometheusRegistry registry = PrometheusRegistry.defaultRegistry;
    private final Map<String, HealthCheck> readinessChecks = new LinkedHashMap<>();
    private final Map<String, HealthCheck> livenessChecks = new LinkedHashMap<>();
    private final Map<String, AdminHandler> routes = new LinkedHashMap<>();
    private EventLoopGroup group;
    private String dashboardComponent = "admin";
    private DashboardSource dashboardSource;
    private InstantSource wall = InstantSource.system();
    private TimeSource time;
    private Duration requestReadTimeout = Duration.ofSeconds(10);
    private int maxConnections = 100;
    private boolean healthOnly;
    private final java.util.Set<String> readinessAliases = new java.util.LinkedHashSet<>();

    private Builder() {}

    /** Serves {@code /readyz}'s answer at {@code path} too (e.g. {@code /ready}, which upstreams use). */
    public Builder readinessAlsoAt(String path) {
      Objects.requireNonNull(path, "path");
      if (!path.startsWith("/") || path.contains("?")) {
        throw new IllegalArgumentException("path: " + path + " (expected: starts with '/', no query)");
      }
      readinessAliases.add(path);
      return this;
    }

    /**
     * Serves only {@code /healthz}, {@code /livez}, {@code /readyz} and the {@link #route} paths:
     * no metrics, dashboard or index (a health port that may face every network).
     */
    public Builder healthOnly() {
      this.healthOnly = true;
      return this;
    }

    /**
     * Timers of the request read timeout; default real time on the server's event loop group. Tests
     * inject a fake clock.
     */
    public Builder timeSource(TimeSource time) {
      this.time = Objects.requireNonNull(time, "time");
      return this;
    }

    /**
     * How long a connection may take to deliver a whole request, counted from the accept and from
     * each response; default 10 s.
     */
    public Builder requestReadTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("requestReadTimeout: " + timeout + " (expected: > 0)");
      }
      this.requestReadTimeout = timeout;
      return this;
    }

    /** Connections held open at once; more are closed at accept. Default 100. */
    public Builder maxConnections(int max) {
      if (max <= 0) {
        throw new IllegalArgumentException("maxConnections: " + max + " (expected: > 0)");
      }
      this.maxConnections = max;
      return this;
    }

    /** Address to listen on; default {@code 127.0.0.1}. Use {@code 0.0.0.0} for every interface. */
    public Builder bindAddress(String host) {
      this.host = Objects.requireNonNull(host, "host");
      return this;
    }

    /** Port to listen on; default 0 picks a free port (see {@link AdminServer#localAddress()}). */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
      }
      this.port = port;
      return this;
    }

    /** Source of {@code /metrics}; default {@link PrometheusRegistry#defaultRegistry}. */
    public Builder registry(PrometheusRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** Adds a check to {@code /readyz}; names are unique and reported in insertion order. */
    public Builder readinessCheck(String name, HealthCheck check) {
      putCheck(readinessChecks, "readinessCheck", name, check);
      return this;
    }

    /** Adds a check to {@code /healthz} and {@code /livez}; names are unique. */
    public Builder livenessCheck(String name, HealthCheck check) {
      putCheck(livenessChecks, "livenessCheck", name, check);
      return this;
    }

    /**
     * Serves {@code path} (exact match, no query) with {@code handler} for every method; replaces a
     * built-in route with the same path.
     */
    public Builder route(String path, AdminHandler handler) {
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(handler, "handler");
      if (!path.startsWith("/") || path.contains("?")) {
        throw new IllegalArgumentException(
            "path: " + path + " (expected: starts with '/', no query)");
      }
      routes.put(path, handler);
      return this;
    }

    /**
     * Shows {@code source}'s live state on {@code /dashboard} (polled through {@code
     * /dashboard/state}) under the title {@code component}, e.g. {@code tunnel-server}. Without it
     * the dashboard shows only the readiness checks.
     */
    public Builder dashboard(String component, DashboardSource source) {
      Objects.requireNonNull(component, "component");
      if (component.isBlank()) {
        throw new IllegalArgumentException("component: '" + component + "' (expected: non-blank)");
      }
      this.dashboardComponent = component;
      this.dashboardSource = Objects.requireNonNull(source, "source");
      return this;
    }

    /** Wall clock stamping each {@code /dashboard/state} answer; default the system clock. */
    public Builder wallClock(InstantSource wall) {
      this.wall = Objects.requireNonNull(wall, "wall");
      return this;
    }

    /**
     * Runs the server on a caller-owned event loop group (epoll or NIO), which {@link
     * AdminServer#close()} leaves running. Default: a private one-thread group.
     */
    public Builder eventLoopGroup(EventLoopGroup group) {
      NettyTransport.of(Objects.requireNonNull(group, "group"));
      this.group = group;
      return this;
    }

    /** The configured, not yet started server. */
    public AdminServer build() {
      return new AdminServer(this);
    }

    private static void putCheck(
        Map<String, HealthCheck> checks, String what, String name, HealthCheck check) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(check, "check");
      if (name.isEmpty() || name.chars().anyMatch(c -> Character.isWhitespace(c) || c == ',')) {
        throw new IllegalArgumentException(
            what + ": name '" + name + "' (expected: non-empty, no spaces or commas)");
      }
      if (checks.putIfAbsent(name, check) != null) {
        throw new IllegalArgumentException(what + ": duplicate name '" + name + "'");
      }
    }
  }
}
