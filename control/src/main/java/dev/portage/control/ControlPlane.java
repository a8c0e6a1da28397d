package dev.portage.control;

import dev.portage.control.destination.DestinationConfig;
import dev.portage.control.destination.DestinationServer;
import dev.portage.control.rules.KubernetesTokenAuthenticator;
import dev.portage.control.rules.RuleServer;
import dev.portage.control.rules.RuleTypeStatus;
import dev.portage.control.rules.TokenAuthenticator;
import dev.portage.control.source.Source;
import dev.portage.control.source.files.FileSource;
import dev.portage.control.source.kubernetes.KubernetesSource;
import dev.portage.control.store.ResourceStore;
import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.HealthCheck;
import dev.portage.core.net.TlsContexts;
import dev.portage.core.net.TlsOptions;
import dev.portage.core.time.TimeSource;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.Server;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Portage control plane ({@code portage control-plane}): one source (a manifest directory or a
 * Kubernetes API server) feeds a revisioned {@link ResourceStore}; one gRPC port serves the dds
 * {@code RuleService} ({@link RuleServer}) and the Linkerd {@code Destination} API ({@link
 * DestinationServer}) from it; an admin listener serves {@code /healthz}, {@code /readyz} (check
 * {@code source-synced}), {@code /metrics}, {@code /status}, and the Linkerd destination controller's
 * {@code /ping} (200 {@code pong}) and {@code /ready} (200 {@code ok} once the source has synced and
 * the gRPC port serves, else 500 {@code not ready}).
 *
 * <p>Lifecycle: construct, {@link #start()} once, {@link #close()} (idempotent, also after a failed or
 * no start). A failed start closes whatever it had opened. The gRPC port serves as soon as it is
 * bound, before a Kubernetes source has synced: gate traffic on {@code /readyz}.
 *
 * <p>Thread-safe: start and close are serialised; accessors may be called from any thread.
 */
public final class ControlPlane implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ControlPlane.class);

  /** Token reviews waiting for a thread beyond this are refused (the client retries). */
  private static final int TOKEN_REVIEW_QUEUE = 1024;

  /** Trust domain of service-account identities from token reviews. */
  private static final String TRUST_DOMAIN = DestinationConfig.DEFAULT_CLUSTER_DOMAIN;

  private final ControlPlaneConfig config;
  private final TimeSource time;
  private final PrometheusRegistry registry;
  private final ResourceStore store = new ResourceStore();

  // Guarded by this. Everything start() opened, closed in reverse order.
  private final Deque<AutoCloseable> opened = new ArrayDeque<>();
  private boolean started;
  private boolean closed;

  private volatile Source source;
  private volatile RuleServer rules;
  private volatile DestinationServer destination;
  private volatile ControlPlaneMetrics metrics;
  private volatile InetSocketAddress grpcAddress;
  private volatile AdminServer admin;

  public ControlPlane(ControlPlaneConfig config, TimeSource time, PrometheusRegistry registry) {
    this.config = Objects.requireNonNull(config, "config");
    this.time = Objects.requireNonNull(time, "time");
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * Starts the source, the servers and both listeners.
   *
   * @throws IOException if a port cannot be bound or a TLS file cannot be read
   * @throws IllegalArgumentException if the manifest directory or kubeconfig is missing
   * @throws IllegalStateException if already started or closed
   */
  public synchronized void start() throws IOException {
    if (started || closed) {
      throw new IllegalStateException(closed ? "control plane is closed" : "control plane already started");
    }
    started = true;
    try {
      open();
    } catch (IOException | RuntimeException | Error e) {
      closeOpened();
      throw e;
    }
    log.info(
        "control plane started: gRPC (RuleService, Destination) on {} ({}), admin on {}, source {}",
        grpcAddress(), config.clientCa() != null ? "mTLS" : config.tls() ? "TLS" : "plaintext", adminAddress(),
        source.describe());
  }

  private void open() throws IOException {
    KubernetesClient client = null;
    if (config.source() == ControlPlaneConfig.SourceType.FILES) {
      Path dir = config.dir();
      if (dir == null) {
        BundledExamples examples = BundledExamples.extract();
        opened.push(examples);
        dir = examples.directory();
        log.info("no --dir given: serving the bundled examples copied to {}", dir);
      }
      source = new FileSource(dir, store, time);
    } else {
      client = kubernetesClient(config.kubeconfig());
      opened.push(client);
      source = new KubernetesSource(client, store, KubernetesSource.Options.allNamespaces());
    }
    opened.push(source);

    ControlPlaneMetrics m = new ControlPlaneMetrics(registry, store, source);
    metrics = m;
    opened.push(m::unregister);

    RuleServer r = new RuleServer(config.ruleServerConfig(), store, time, registry, tokenAuthenticator(client));
    rules = r;
    opened.push(r);
    r.start();

    DestinationServer d = new DestinationServer(config.destination(), store, time, registry);
    destination = d;
    opened.push(d);

    source.start();

    Server g = grpcServer(r, d, m).start();
    opened.push(() -> stopGrpc(g, r, d));
    grpcAddress = (InetSocketAddress) g.getListenSockets().get(0);

    AdminServer a =
        AdminServer.builder()
            .bindAddress(config.adminBindAddress())
            .port(config.adminPort())
            .registry(registry)
            .readinessCheck("source-synced", this::sourceSynced)
            .route("/status", new StatusPage(this))
            .route("/ping", request -> AdminResponse.text(200, "pong\n"))
            .route("/ready", request -> isReady() ? AdminResponse.text(200, "ok\n") : AdminResponse.text(500, "not ready\n"))
            .dashboard(DashboardState.COMPONENT, new DashboardState(this))
            .wallClock(time.wall())
            .build();
    opened.push(a);
    a.start();
    admin = a;
  }

  private static KubernetesClient kubernetesClient(Path kubeconfig) {
    if (kubeconfig == null) {
      return new KubernetesClientBuilder().build();
    }
    if (!Files.isRegularFile(kubeconfig)) {
      throw new IllegalArgumentException("kubeconfig: " + kubeconfig + " (expected: an existing kubeconfig file)");
    }
    return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeconfig.toFile())).build();
  }

  /** Bearer tokens are checked by TokenReview when a Kubernetes API server is at hand. */
  private TokenAuthenticator tokenAuthenticator(KubernetesClient client) {
    if (client == null) {
      return null;
    }
    ThreadPoolExecutor reviews =
        new ThreadPoolExecutor(
            2, 2, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(TOKEN_REVIEW_QUEUE),
            r -> Thread.ofPlatform().daemon().name("portage-token-review").unstarted(r));
    opened.push(reviews::shutdownNow);
    KubernetesTokenAuthenticator reviewer = new KubernetesTokenAuthenticator(client, reviews, TRUST_DOMAIN);
    return token -> {
      try {
        return reviewer.authenticate(token);
      } catch (RejectedExecutionException e) {
        return CompletableFuture.failedFuture(
            new IllegalStateException("too many token reviews in progress; retry later"));
      }
    };
  }

  private Server grpcServer(RuleServer r, DestinationServer d, ControlPlaneMetrics m) throws IOException {
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(new InetSocketAddress(config.grpcBindAddress(), config.grpcPort()))
            .addService(r.serviceDefinition())
            .addService(d.service())
            .addTransportFilter(m.transportFilter())
            // Proxies hold these streams for hours: let them ping (Linkerd's proxy does every 10 s)
            // and find dead peers ourselves instead of waiting for TCP to notice.
            .permitKeepAliveTime(5, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true)
            .keepAliveTime(30, TimeUnit.SECONDS)
            .keepAliveTimeout(10, TimeUnit.SECONDS);
    if (config.tls()) {
      b.sslContext(
          GrpcSslContexts.configure(
                  TlsContexts.serverBuilder(config.tlsCert(), config.tlsKey(), config.clientCa(), TlsOptions.defaults()),
                  TlsContexts.provider())
              .build());
    }
    return b.build();
  }

  /** Stops accepting, ends the open streams (so clients reconnect elsewhere), then waits for the calls. */
  private static void stopGrpc(Server g, RuleServer r, DestinationServer d) throws InterruptedException {
    g.shutdown();
    r.close();
    d.close();
    if (!g.awaitTermination(5, TimeUnit.SECONDS)) {
      g.shutdownNow();
      g.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private HealthCheck.Result sourceSynced() {
    Source s = source;
    return s != null && s.isSynced()
        ? HealthCheck.Result.ok()
        : HealthCheck.Result.failed("source " + (s == null ? "?" : s.describe()) + " has not loaded its initial state");
  }

  /** The bound gRPC address (the real port when 0 was configured). */
  public InetSocketAddress grpcAddress() {
    return requireStarted(grpcAddress, "gRPC server");
  }

  /** The bound admin address. */
  public InetSocketAddress adminAddress() {
    return requireStarted(admin, "admin server").localAddress();
  }

  /** The store every server reads; a test or an embedding program may write to it directly. */
  public ResourceStore store() {
    return store;
  }

  /** The settings this control plane runs with. */
  public ControlPlaneConfig config() {
    return config;
  }

  /** Open dds {@code Observe} streams. */
  public int ruleConnectionCount() {
    RuleServer r = rules;
    return r == null ? 0 : r.connectionCount();
  }

  /** Per dds type: revision, subscribers, unacknowledged pushes; empty before start. */
  List<RuleTypeStatus> ruleTypes() {
    RuleServer r = rules;
    return r == null ? List.of() : r.typeStatus();
  }

  /** Open Destination {@code Get} and {@code GetProfile} streams. */
  public int destinationStreamCount() {
    DestinationServer d = destination;
    return d == null ? 0 : d.streamCount();
  }

  /** Open client connections on the gRPC port. */
  public int grpcConnectionCount() {
    ControlPlaneMetrics m = metrics;
    return m == null ? 0 : m.grpcConnections();
  }

  /** Whether the gRPC port serves and the source has loaded its initial state ({@code /ready}). */
  public boolean isReady() {
    return grpcAddress != null && sourceSynced().healthy();
  }

  Source source() {
    return requireStarted(source, "source");
  }

  /**
   * Closes the listeners, ends every stream with UNAVAILABLE, stops the source and releases the
   * Kubernetes client and any extracted examples. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (closeOpened()) {
      log.info("control plane closed");
    }
  }

  /** Closes what start() opened, newest first; returns whether anything was open. */
  private boolean closeOpened() {
    boolean any = !opened.isEmpty();
    while (!opened.isEmpty()) {
      AutoCloseable c = opened.pop();
      try {
        c.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        log.warn("control plane: closing {} failed", c, e);
      }
    }
    return any;
  }

  private static <T> T requireStarted(T value, String what) {
    if (value == null) {
      throw new IllegalStateException(what + " not started");
    }
    return value;
  }
}
