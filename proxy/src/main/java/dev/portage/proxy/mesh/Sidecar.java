package dev.portage.proxy.mesh;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.control.client.destination.DestinationClient;
import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.balance.Balancer;
import dev.portage.core.http.CleartextHttpInitializer;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.HttpStream;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.internal.SystemPropertyUtil;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The L7 mesh sidecar (Linkerd-style outbound proxy): accepts HTTP/1.1 and h2c on the outbound
 * port, routes each request by its {@code Host}/{@code :authority} to a destination resolved over
 * the Destination API, and applies the destination's service profile (routes, timeouts, retries
 * within the budget, traffic split) and P2C peak-EWMA balancing. The admin port serves {@code
 * /healthz}, {@code /readyz}, {@code /metrics} and linkerd2-proxy's {@code /live} (200 {@code live})
 * and {@code /ready} (200 {@code ready} while the outbound listener is open, else 503 {@code not
 * ready}).
 *
 * <p>{@link #start()} and {@link #close()} must not be called from the sidecar's event loops;
 * everything else is thread-safe.
 */
public final class Sidecar implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Sidecar.class);

  /** Destinations and profiles without requests for this long stop being watched. */
  static final Duration DISCOVERY_IDLE_TIMEOUT = Duration.ofSeconds(60);

  private final SidecarConfig config;
  private final TimeSource time;
  private final PrometheusRegistry registry;
  private final ManagedChannel ownedChannel;
  private final DestinationClient destinations;
  private final RandomGenerator random;
  private final ChannelGroup inbound = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  // Per event loop: a request starts and ends on its connection's loop, so no loop writes a count
  // another loop writes (one shared atomic made both loops fight over its cache line per request).
  private final PerThreadCells inflight = new PerThreadCells(1);
  private EventLoopGroup group;
  private HttpClientPool pool;
  private Discovery discovery;
  private Profiles profiles;
  private SidecarMetrics metrics;
  private AdminServer admin;
  private io.netty.channel.Channel listener;
  private ScheduledFuture<?> evictor;
  private boolean started;
  private boolean closed;

  /**
   * A sidecar that talks to the control plane at {@code config.destinationAddr()}, over TLS when
   * {@code config.destinationTls()} is set.
   *
   * @throws UncheckedIOException if a TLS file cannot be read (the message names it)
   */
  public Sidecar(SidecarConfig config, TimeSource time, PrometheusRegistry registry) {
    this(config, time, registry, null, ThreadLocalRandom.current());
  }

  /**
   * @param destinationChannel the control plane's channel (not closed by the sidecar), or null to
   *     open one to {@code config.destinationAddr()}
   * @param random thread-safe source for balancing and traffic splits
   */
  Sidecar(
      SidecarConfig config, TimeSource time, PrometheusRegistry registry, Channel destinationChannel,
      RandomGenerator random) {
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.random = Objects.requireNonNull(random, "random");
    Channel ch = destinationChannel;
    if (ch == null) {
      try {
        ownedChannel = ControlPlaneTls.channel(config.destinationAddr(), config.destinationTls());
      } catch (IOException e) {
        throw new UncheckedIOException("sidecar: control plane TLS: " + e.getMessage(), e);
      }
      ch = ownedChannel;
    } else {
      ownedChannel = null;
    }
    this.destinations = DestinationClient.newBuilder(ch, time).build();
  }

  /**
   * Binds the outbound and admin listeners.
   *
   * @throws IOException if a port cannot be bound (everything opened so far is closed)
   * @throws IllegalStateException if already started or closed
   */
  public synchronized Sidecar start() throws IOException {
    if (started || closed) {
      throw new IllegalStateException(closed ? "sidecar is closed" : "sidecar already started");
    }
    started = true;
    try {
      // Epoll where it loads: no channel here half-closes (an EOF closes it; nothing is relayed raw).
      group = NettyTransport.bestWithoutHalfClose().newEventLoopGroup(ioThreads(config.ioThreads()), "portage-sidecar");
      pool = HttpClientPool.builder(group, time).connectTimeout(config.connectTimeout()).build();
      var readiness = new Destination.Readiness(
          config.reconnectBackoff(), config.failureAccrual(), time.scheduler(), random, this::connect);
      discovery = new Discovery(destinations, this::newBalancer, readiness, time.ticker(), DISCOVERY_IDLE_TIMEOUT);
      profiles = new Profiles(destinations, time.ticker(), DISCOVERY_IDLE_TIMEOUT);
      metrics = new SidecarMetrics(registry, discovery, profiles);
      Service stack = stack();
      long sweep = DISCOVERY_IDLE_TIMEOUT.toNanos() / 2;
      evictor = time.scheduler().scheduleWithFixedDelay(() -> {
        discovery.evictIdle();
        profiles.evictIdle();
      }, sweep, sweep, TimeUnit.NANOSECONDS);
      var bind = new ServerBootstrap()
          .group(group)
          .channel(NettyTransport.of(group).serverChannelType())
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new io.netty.channel.ChannelInitializer<>() {
            @Override
            protected void initChannel(io.netty.channel.Channel ch) {
              inbound.add(ch);
              ch.pipeline().addLast(new CleartextHttpInitializer(protocol ->
                  new InboundHandler(stack, protocol, time.ticker(), metrics, Sidecar.this::countInflight)));
            }
          })
          .bind(config.outboundBindAddress(), config.outboundPort())
          .awaitUninterruptibly();
      if (!bind.isSuccess()) {
        throw new IOException("sidecar: cannot bind outbound " + config.outboundBindAddress() + ":"
            + config.outboundPort() + ": " + bind.cause().getMessage(), bind.cause());
      }
      listener = bind.channel();
      admin = AdminServer.builder()
          .bindAddress(config.adminBindAddress())
          .port(config.adminPort())
          .registry(registry)
          .readinessCheck("outbound", this::outboundReady)
          // linkerd2-proxy's probe paths, as its pod specs probe them.
          .route("/live", request -> AdminResponse.text(200, "live\n"))
          .route("/ready", request -> outboundReady().healthy()
              ? AdminResponse.text(200, "ready\n") : AdminResponse.text(503, "not ready\n"))
          .dashboard(DashboardState.COMPONENT, new DashboardState(config, discovery, profiles, this::inflightRequests))
          .wallClock(time.wall())
          .build()
          .start();
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
    log.info("Sidecar listening on {} (admin {}), destinations from {}, balancer {}",
        listener.localAddress(), admin.localAddress(), config.destinationAddr(), config.balancer());
    return this;
  }

  private HealthCheck.Result outboundReady() {
    io.netty.channel.Channel l = listener;
    return l != null && l.isActive() ? HealthCheck.Result.ok() : HealthCheck.Result.failed("outbound listener closed");
  }

  /**
   * The request stack, outermost first; each layer does one job (see each class). A request's path
   * reads top to bottom.
   */
  private Service stack() {
    Duration failfast = config.failfastTimeout();
    EndpointDispatch dispatch = new EndpointDispatch(pool);
    return new RouteLayer(profiles, time, failfast,                   // profile routes, first match wins
        new TimeoutLayer(time,                                        // per-route timeout from request start
            new RetryLayer(metrics,                                   // retryable routes, within the budget
                new SplitLayer(random,                                // dst_overrides traffic split
                    new FailFastLayer(discovery, time, failfast, metrics,  // wait for a ready endpoint, then 503
                        requeue -> new BalanceLayer(time.ticker(), metrics, dispatch, // P2C over ready endpoints;
                            requeue))))));                                      // a failed connect goes around again
  }

  /**
   * A background connect to an unreachable endpoint: an HTTP/1.1 connection, put in the pool when it
   * opens (the next request to the endpoint finds it ready).
   */
  private CompletionStage<?> connect(dev.portage.core.balance.Endpoint<InetSocketAddress> endpoint) {
    return pool.acquire(endpoint.target(), HttpProtocol.HTTP_1_1, group.next())
        .thenAccept(HttpStream::release);
  }

  /**
   * The configured count, else one event loop per core, or Netty's {@code
   * -Dio.netty.eventLoopThreads}. Netty's own default (two per core) only adds context switches here:
   * a proxied exchange keeps both of its connections on one loop, so the loops never wait on each
   * other.
   */
  static int ioThreads(int configured) {
    if (configured > 0) {
      return configured;
    }
    return Math.max(1, SystemPropertyUtil.getInt("io.netty.eventLoopThreads", NettyRuntime.availableProcessors()));
  }

  private Balancer<InetSocketAddress> newBalancer() {
    return switch (config.balancer()) {
      case P2C_EWMA -> Balancer.peakEwmaP2c(
          time.ticker(), random, config.ewmaDecay(), config.ewmaDefaultRtt(), config.ewmaFailurePenalty());
      case ROUND_ROBIN -> Balancer.roundRobin();
    };
  }

  /** The bound outbound address (the real port when 0 was configured). */
  public synchronized InetSocketAddress outboundAddress() {
    if (listener == null) {
      throw new IllegalStateException("sidecar not started");
    }
    return (InetSocketAddress) listener.localAddress();
  }

  /** The bound admin address. */
  public synchronized InetSocketAddress adminAddress() {
    if (admin == null) {
      throw new IllegalStateException("sidecar not started");
    }
    return admin.localAddress();
  }

  /** Closes the listeners, client connections and watches; idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    if (listener != null) {
      listener.close().awaitUninterruptibly();
    }
    inbound.close().awaitUninterruptibly();
    if (admin != null) {
      admin.close();
    }
    if (evictor != null) {
      evictor.cancel(false);
    }
    if (pool != null) {
      pool.close();
    }
    if (discovery != null) {
      discovery.close();
    }
    if (profiles != null) {
      profiles.close();
    }
    destinations.close();
    if (ownedChannel != null) {
      ownedChannel.shutdownNow();
    }
    if (metrics != null) {
      metrics.unregister();
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
    log.info("Sidecar closed");
  }

  HttpClientPool pool() {
    return pool;
  }

  Discovery discovery() {
    return discovery;
  }

  Profiles profiles() {
    return profiles;
  }

  /** Open client connections on the outbound listener. */
  int inboundConnections() {
    return inbound.size();
  }

  /** The open client connections on the outbound listener (for tests to inspect). */
  ChannelGroup inboundChannels() {
    return inbound;
  }

  /** Counts requests starting (+1) and ending (-1) on the calling event loop. */
  private void countInflight(int delta) {
    PerThreadCells.add(inflight.mine(), 0, delta);
  }

  /** Requests between their head and the end of their response. */
  int inflightRequests() {
    return (int) inflight.sum(0);
  }
}
