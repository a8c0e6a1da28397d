package dev.portage.control.source.kubernetes;

import dev.portage.control.source.Source;
import dev.portage.control.store.ResourceStore;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the store from a Kubernetes API server: one fabric8 informer (list, watch, periodic resync)
 * per kind of {@link dev.portage.control.source.Kinds#ALL} — the six dds rule CRDs, Services,
 * EndpointSlices and Linkerd ServiceProfiles — optionally restricted to one namespace.
 *
 * <p>Each object is stored as its JSON tree with {@code sourceVersion} = its resourceVersion, and the
 * resourceVersion (numeric on etcd-backed servers; 0 otherwise) as the revision hint, so store
 * revisions follow the cluster and survive a control-plane restart. A kind's first list replaces
 * whatever the store held for it.
 *
 * <p>A kind the server does not serve (404 on list, e.g. a CRD that is not installed) is logged once
 * as a WARN, reported by {@link #unavailableKinds()} and not retried; the other kinds keep working
 * and {@link #isSynced()} does not wait for it. Install the CRD and restart to pick it up. Other
 * failures (server unreachable, 403) are retried with fabric8's backoff and keep the source unsynced.
 *
 * <p>Thread-safe. The client is not closed by {@link #close()}: whoever built it owns it.
 */
public final class KubernetesSource implements Source {

  private static final Logger log = LoggerFactory.getLogger(KubernetesSource.class);

  /**
   * Settings.
   *
   * @param namespace watch only this namespace, or all namespaces when null
   * @param resyncPeriod how often informers re-deliver their cache (no-op puts that catch anything
   *     missed); zero disables
   */
  public record Options(String namespace, Duration resyncPeriod) {

    public Options {
      Objects.requireNonNull(resyncPeriod, "resyncPeriod");
      if (resyncPeriod.isNegative()) {
        throw new IllegalArgumentException("resyncPeriod: " + resyncPeriod + " (expected: >= 0)");
      }
      if (namespace != null && namespace.isEmpty()) {
        throw new IllegalArgumentException("namespace: \"\" (expected: null for all, or a name)");
      }
    }

    /** All namespaces, resync every 10 minutes. */
    public static Options allNamespaces() {
      return new Options(null, Duration.ofMinutes(10));
    }
  }

  private final KubernetesClient client;
  private final ResourceStore store;
  private final Options options;
  private final List<KindFeed> feeds = new ArrayList<>();
  private final List<SharedIndexInformer<GenericKubernetesResource>> informers = new ArrayList<>();
  private boolean started;
  private boolean closed;

  public KubernetesSource(KubernetesClient client, ResourceStore store, Options options) {
    this.client = Objects.requireNonNull(client, "client");
    this.store = Objects.requireNonNull(store, "store");
    this.options = Objects.requireNonNull(options, "options");
  }

  @Override
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException(describe() + " already started");
    }
    started = true;
    log.info("kubernetes source starting: {}", describe());
    for (WatchedKind kind : WatchedKind.ALL) {
      KindFeed feed = new KindFeed(kind, store, client.getKubernetesSerialization());
      MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> op =
          client.genericKubernetesResources(kind.context());
      Informable<GenericKubernetesResource> informable =
          options.namespace() == null ? op.inAnyNamespace() : op.inNamespace(options.namespace());
      SharedIndexInformer<GenericKubernetesResource> informer =
          informable.runnableInformer(options.resyncPeriod().toMillis());
      informer.exceptionHandler((isStarted, t) -> retry(feed, t));
      informer.addEventHandler(feed);
      feeds.add(feed);
      informers.add(informer);
      informer.start().whenComplete((ignored, t) -> {
        if (t != null) {
          feed.markUnavailable(describeFailure(t), t);
        }
      });
    }
  }

  /** True when every kind has completed its first list, or is unavailable. */
  @Override
  public boolean isSynced() {
    List<KindFeed> snapshot;
    synchronized (this) {
      if (!started) {
        return false;
      }
      snapshot = List.copyOf(feeds);
    }
    return snapshot.stream().allMatch(f -> f.isSynced() || f.isUnavailable());
  }

  /** Kinds whose informer gave up (the API server does not serve them), sorted. */
  public Set<String> unavailableKinds() {
    Set<String> out = new TreeSet<>();
    synchronized (this) {
      for (KindFeed f : feeds) {
        if (f.isUnavailable()) {
          out.add(f.kind().storeKind());
        }
      }
    }
    return out;
  }

  @Override
  public String describe() {
    return "kubernetes:" + client.getMasterUrl()
        + (options.namespace() == null ? " (all namespaces)" : " (namespace " + options.namespace() + ")");
  }

  @Override
  public void close() {
    List<SharedIndexInformer<GenericKubernetesResource>> toStop;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toStop = List.copyOf(informers);
    }
    for (SharedIndexInformer<GenericKubernetesResource> informer : toStop) {
      informer.close();
    }
    log.info("kubernetes source closed: {}", describe());
  }

  /**
   * The informers' exception policy: a 404 means the server does not serve the kind (CRD not
   * installed, or removed) — stop that informer for good; a payload that cannot be parsed will not
   * parse on retry either; anything else (connection refused, 403, 5xx, watch errors) is retried.
   */
  private static boolean retry(KindFeed feed, Throwable t) {
    if (isNotFound(t)) {
      feed.markUnavailable("HTTP 404 from the API server: CRD not installed?", t);
      return false;
    }
    return !ExceptionHandler.isDeserializationException(t);
  }

  private static boolean isNotFound(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof KubernetesClientException k && k.getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        return true;
      }
      if (c instanceof WatcherException w
          && w.asClientException().getCode() == HttpURLConnection.HTTP_NOT_FOUND) {
        return true;
      }
    }
    return false;
  }

  private static String describeFailure(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return isNotFound(t) ? "HTTP 404 from the API server: CRD not installed?" : String.valueOf(root);
  }
}
