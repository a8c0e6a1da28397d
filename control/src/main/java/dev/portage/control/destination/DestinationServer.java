package dev.portage.control.destination;

import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.StoreEvent;
import dev.portage.control.store.StoreListener;
import dev.portage.control.store.Watch;
import dev.portage.core.time.TimeSource;
import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the Linkerd {@code Destination} API (endpoints and service profiles) from the {@link
 * ResourceStore}: Services, EndpointSlices and ServiceProfiles. Bind {@link #service()} on a gRPC
 * server; {@link #close()} ends every stream with UNAVAILABLE so clients reconnect elsewhere.
 *
 * <p>{@code Get}: the first message comes at once: {@code add} with every ready endpoint, {@code
 * no_endpoints{exists:true}} for a Service without ready endpoints, or {@code
 * no_endpoints{exists:false}} for a well-formed FQDN whose Service does not exist. In that last case
 * the stream stays open and picks the Service up if it is created later; gRPC {@code NOT_FOUND} is
 * never used, because the first-message rule and Linkerd's endpoint watcher both answer an unknown
 * service with {@code no_endpoints{exists:false}} (which lets the proxy fall back to DNS). Malformed
 * authorities, IP literals and schemes other than {@code k8s} get {@code INVALID_ARGUMENT}. Later
 * messages are diffs. Each stream holds at most {@code streamQueueLimit} unsent updates; a stream
 * whose client falls further behind is aborted with {@code RESOURCE_EXHAUSTED} (and counted), other
 * streams are unaffected.
 *
 * <p>{@code GetProfile}: the translated ServiceProfile named by the FQDN (one in the caller's
 * namespace from the context token wins over the service's own), or the default profile; re-sent
 * whole on every change.
 *
 * <p>Threading: all stream state lives on one serial executor owned by this server, which also
 * receives the store's watch events; gRPC threads and the store's dispatch only hand work to it and
 * never wait. Thread-safe.
 */
public final class DestinationServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DestinationServer.class);
  private static final Set<String> KINDS =
      Set.of(KubeKinds.SERVICE, KubeKinds.ENDPOINT_SLICE, KubeKinds.SERVICE_PROFILE);

  private final DestinationConfig config;
  private final ResourceStore store;
  private final TimeSource time;
  private final DestinationMetrics metrics;
  private final ProfileTranslator translator;
  private final DestinationService service;
  private final ExecutorService executor;
  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, DestinationStream<?>> streams = new ConcurrentHashMap<>();
  private final Watch watch;
  private volatile boolean closed;

  // Confined to the executor.
  private final SliceIndex slices = new SliceIndex();
  private final EndpointResolver resolver;
  private final Map<ServiceRef, Set<EndpointStream>> endpointStreams = new HashMap<>();
  private final Map<String, Set<ProfileStream>> profileStreams = new HashMap<>();
  private final Set<ServiceRef> dirtyServices = new HashSet<>();
  private final Set<String> dirtyProfiles = new HashSet<>();
  private boolean dirtyAll;
  private boolean flushScheduled;

  public DestinationServer(
      DestinationConfig config, ResourceStore store, TimeSource time, PrometheusRegistry registry) {
    this.config = Objects.requireNonNull(config, "config");
    this.store = Objects.requireNonNull(store, "store");
    this.time = Objects.requireNonNull(time, "time");
    this.metrics = new DestinationMetrics(Objects.requireNonNull(registry, "registry"));
    this.translator = new ProfileTranslator(metrics);
    this.resolver = new EndpointResolver(store, slices, config.endpointWeight());
    this.service = new DestinationService(this, config.clusterDomain());
    this.executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "portage-destination");
              t.setDaemon(true);
              return t;
            });
    // Watch first, then list on the executor: events that race the listing are applied after it
    // and the index ignores any older than what it holds.
    this.watch = store.watch(KINDS, executor, new Changes());
    executor.execute(() -> slices.reset(store.list(KubeKinds.ENDPOINT_SLICE).items()));
    log.info("destination server started (cluster domain {})", config.clusterDomain());
  }

  /** The gRPC service to add to a server. */
  public BindableService service() {
    return service;
  }

  /** Live Get and GetProfile streams (for status pages and leak tests). */
  public int streamCount() {
    return streams.size();
  }

  /** Ends every stream with UNAVAILABLE and stops watching the store; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    watch.close();
    run(
        () -> {
          for (DestinationStream<?> s : new ArrayList<>(streams.values())) {
            s.abort(Status.UNAVAILABLE.withDescription("destination server is shutting down"));
            unregister(s);
          }
        });
    executor.shutdown();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("destination server executor did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    metrics.unregister();
    log.info("destination server stopped");
  }

  void openEndpoints(Authority a, ContextToken ctx, ServerCallStreamObserver<Update> call) {
    EndpointStream s =
        new EndpointStream(
            ids.incrementAndGet(), a, ctx, call, config.streamQueueLimit(), metrics, time.ticker().nanoTime());
    open(s, call, () -> {
      endpointStreams.computeIfAbsent(a.service(), k -> new LinkedHashSet<>()).add(s);
      publish(s, resolver.resolve(a));
    });
  }

  void openProfile(Authority a, ContextToken ctx, ServerCallStreamObserver<DestinationProfile> call) {
    ProfileStream s = new ProfileStream(ids.incrementAndGet(), a, ctx, call, metrics, time.ticker().nanoTime());
    open(s, call, () -> {
      profileStreams.computeIfAbsent(a.fqdn(), k -> new LinkedHashSet<>()).add(s);
      s.publish(profile(a, ctx));
      s.drain();
    });
  }

  /** Called on a gRPC thread inside the service method, so the cancel handler cannot run before. */
  private void open(DestinationStream<?> s, ServerCallStreamObserver<?> call, Runnable index) {
    call.setOnCancelHandler(() -> run(() -> unregister(s)));
    call.setOnReadyHandler(() -> run(s::drain));
    boolean queued =
        run(
            () -> {
              if (closed || s.isClosed()) {
                s.abort(Status.UNAVAILABLE.withDescription("destination server is shutting down"));
                return;
              }
              streams.put(s.id, s);
              metrics.streamOpened(s.rpc);
              log.debug("{} opened (context {})", s, s.context);
              index.run();
            });
    if (!queued) {
      call.onError(Status.UNAVAILABLE.withDescription("destination server is shutting down").asRuntimeException());
    }
  }

  /** On the executor. */
  private void publish(EndpointStream s, EndpointSnapshot snapshot) {
    if (s.publish(snapshot)) {
      s.drain();
      return;
    }
    metrics.overflow();
    log.warn("{}: client fell {} updates behind; stream aborted", s, s.queued());
    s.abort(
        Status.RESOURCE_EXHAUSTED.withDescription(
            "destination " + s.authority + ": client fell more than " + config.streamQueueLimit()
                + " updates behind; stream aborted, reconnect to resync"));
    unregister(s);
  }

  /** On the executor. */
  private void unregister(DestinationStream<?> s) {
    s.markClosed();
    if (streams.remove(s.id) == null) {
      return;
    }
    if (s instanceof EndpointStream e) {
      removeFrom(endpointStreams, e.authority.service(), e);
    } else if (s instanceof ProfileStream p) {
      removeFrom(profileStreams, p.authority.fqdn(), p);
    }
    metrics.streamClosed(s.rpc);
    log.debug(
        "{} closed after {}", s, Duration.ofNanos(time.ticker().nanoTime() - s.openedAtNanos()));
  }

  private static <K, V> void removeFrom(Map<K, Set<V>> index, K key, V value) {
    Set<V> set = index.get(key);
    if (set != null && set.remove(value) && set.isEmpty()) {
      index.remove(key);
    }
  }

  /** On the executor. */
  private DestinationProfile profile(Authority a, ContextToken ctx) {
    String ns = a.service().namespace();
    Resource profile = null;
    if (!ctx.ns().isEmpty() && !ctx.ns().equals(ns)) {
      profile = store.get(new ResourceKey(KubeKinds.SERVICE_PROFILE, ctx.ns(), a.fqdn())).orElse(null);
    }
    if (profile == null) {
      profile = store.get(new ResourceKey(KubeKinds.SERVICE_PROFILE, ns, a.fqdn())).orElse(null);
    }
    Resource svc = store.get(new ResourceKey(KubeKinds.SERVICE, ns, a.service().name())).orElse(null);
    return translator.translate(a, profile, svc);
  }

  /** Recomputes what changed since the last flush, once per service and authority. On the executor. */
  private void flush() {
    flushScheduled = false;
    Set<ServiceRef> services = dirtyAll ? new HashSet<>(endpointStreams.keySet()) : new HashSet<>(dirtyServices);
    Set<String> profiles = dirtyAll ? new HashSet<>(profileStreams.keySet()) : new HashSet<>(dirtyProfiles);
    dirtyAll = false;
    dirtyServices.clear();
    dirtyProfiles.clear();
    Map<Authority, EndpointSnapshot> snapshots = new HashMap<>();
    for (ServiceRef ref : services) {
      Set<EndpointStream> set = endpointStreams.get(ref);
      if (set != null) {
        for (EndpointStream s : new ArrayList<>(set)) {
          publish(s, snapshots.computeIfAbsent(s.authority, resolver::resolve));
        }
      }
    }
    for (String fqdn : profiles) {
      Set<ProfileStream> set = profileStreams.get(fqdn);
      if (set != null) {
        for (ProfileStream s : set) {
          s.publish(profile(s.authority, s.context));
          s.drain();
        }
      }
    }
  }

  private boolean run(Runnable task) {
    try {
      executor.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** Store events, delivered on the executor; marks what to recompute and coalesces into one flush. */
  private final class Changes implements StoreListener {

    @Override
    public void onEvent(StoreEvent e) {
      ResourceKey key = e.resource().key();
      switch (key.kind()) {
        case KubeKinds.SERVICE -> {
          ServiceRef ref = new ServiceRef(key.namespace(), key.name());
          dirtyServices.add(ref);
          dirtyProfiles.add(ref.fqdn(config.clusterDomain()));
        }
        case KubeKinds.ENDPOINT_SLICE -> dirtyServices.addAll(slices.apply(e));
        case KubeKinds.SERVICE_PROFILE -> dirtyProfiles.add(key.name());
        default -> {
          return;
        }
      }
      scheduleFlush();
    }

    @Override
    public void onResync(long revision) {
      log.info("destination server resyncing at store revision {}", revision);
      slices.reset(store.list(KubeKinds.ENDPOINT_SLICE).items());
      dirtyAll = true;
      scheduleFlush();
    }

    private void scheduleFlush() {
      if (!flushScheduled) {
        flushScheduled = run(DestinationServer.this::flush);
      }
    }
  }
}
