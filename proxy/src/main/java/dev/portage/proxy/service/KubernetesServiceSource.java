package dev.portage.proxy.service;

import dev.portage.proxy.service.model.ClusterSnapshot;
import dev.portage.proxy.service.model.ServicePort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Services and EndpointSlices (discovery.k8s.io/v1) from the Kubernetes API, as kube-proxy reads
 * them: informers in every namespace; an event only marks its Service changed and asks for a sync,
 * and {@link #snapshot()} (called by the sync) re-reads just the changed Services, so 10,000 Service
 * creations cost 10,000 small updates rather than 10,000 rebuilds of everything (kube-proxy's change
 * trackers).
 *
 * <p>Informer events arrive on fabric8's threads; {@link #snapshot()} may run on any thread. Both
 * take one lock, briefly.
 */
final class KubernetesServiceSource implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(KubernetesServiceSource.class);
  private static final String BY_SERVICE = "service";

  private final KubernetesClient client;
  private final boolean ownsClient;
  private final String hostname;
  private final Object lock = new Object();
  private Runnable onChange; // guarded by lock
  private SharedIndexInformer<Service> services; // guarded by lock
  private SharedIndexInformer<EndpointSlice> slices; // guarded by lock
  private boolean closed; // guarded by lock
  /** Service keys ({@code namespace/name}) changed since the last snapshot; guarded by lock. */
  private final Set<String> dirty = new HashSet<>();
  /** Ports by Service key and by port id, as of the last snapshot; guarded by lock. */
  private final Map<String, Map<String, ServicePort>> byService = new HashMap<>();
  private final Map<String, ServicePort> ports = new HashMap<>();
  private final Map<String, Instant> triggers = new HashMap<>();

  /**
   * @param client the API client; closed by {@link #close()} only if {@code ownsClient}
   * @param hostname this node's name (kube-proxy's {@code --hostname-override}); endpoints whose
   *     {@code nodeName} equals it are local
   */
  KubernetesServiceSource(KubernetesClient client, boolean ownsClient, String hostname) {
    this.client = Objects.requireNonNull(client, "client");
    this.ownsClient = ownsClient;
    this.hostname = hostname;
  }

  /** A source with its own client from {@code kubeconfig}, or the in-cluster/default config when null. */
  static KubernetesServiceSource fromKubeconfig(Path kubeconfig, String hostname) throws IOException {
    Config config = kubeconfig == null
        ? Config.autoConfigure(null)
        : Config.fromKubeconfig(Files.readString(kubeconfig));
    return new KubernetesServiceSource(new KubernetesClientBuilder().withConfig(config).build(), true, hostname);
  }

  /** Starts the informers; {@code onChange} runs (on an informer thread) after every change. */
  void start(Runnable onChange) {
    Objects.requireNonNull(onChange, "onChange");
    synchronized (lock) {
      if (this.onChange != null || closed) {
        throw new IllegalStateException("kubernetes source: already started or closed");
      }
      this.onChange = onChange;
      services = client.services().inAnyNamespace().runnableInformer(0);
      slices = client.discovery().v1().endpointSlices().inAnyNamespace().runnableInformer(0);
      slices.addIndexers(Map.of(BY_SERVICE, slice -> {
        String service = serviceOf(slice);
        return service == null ? List.of() : List.of(service);
      }));
      services.addEventHandler(new Changed<>(KubernetesServiceSource::key));
      slices.addEventHandler(new Changed<>(KubernetesServiceSource::serviceOf));
      // start() keeps retrying the first list in the background: an API server that is not there
      // yet delays readiness instead of failing the proxy.
      services.start().thenCombine(slices.start(), (a, b) -> null).thenRun(onChange);
    }
    log.info("Kubernetes source started (Services and EndpointSlices, node {})", hostname);
  }

  /**
   * What the cluster holds now, or null until both informers have listed once (kube-proxy writes
   * no rules before that).
   */
  ClusterSnapshot snapshot() {
    synchronized (lock) {
      if (closed || services == null || !services.hasSynced() || !slices.hasSynced()) {
        return null;
      }
      for (String key : dirty) {
        Map<String, ServicePort> old = byService.remove(key);
        if (old != null) {
          old.keySet().forEach(ports::remove);
          old.keySet().forEach(triggers::remove);
        }
        Service service = services.getStore().getByKey(key);
        if (service == null) {
          continue;
        }
        List<EndpointSlice> own = slices.getIndexer().byIndex(BY_SERVICE, key);
        Map<String, ServicePort> now = ServicePorts.of(service, own, hostname);
        if (!now.isEmpty()) {
          byService.put(key, now);
          ports.putAll(now);
          Instant trigger = ServicePorts.triggerTime(own);
          if (trigger != null) {
            now.keySet().forEach(id -> triggers.put(id, trigger));
          }
        }
      }
      dirty.clear();
      return new ClusterSnapshot(ports, triggers);
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (services != null) {
        services.close();
        slices.close();
      }
    }
    if (ownsClient) {
      client.close();
    }
  }

  @Override
  public String toString() {
    return "kubernetes " + client.getMasterUrl();
  }

  private void changed(String key) {
    Runnable notify;
    synchronized (lock) {
      if (closed || key == null) {
        return;
      }
      dirty.add(key);
      notify = onChange;
    }
    notify.run();
  }

  private static String key(HasMetadata object) {
    return object.getMetadata().getNamespace() + "/" + object.getMetadata().getName();
  }

  private static String serviceOf(EndpointSlice slice) {
    Map<String, String> labels = slice.getMetadata().getLabels();
    String service = labels == null ? null : labels.get(ServicePorts.SERVICE_NAME_LABEL);
    return service == null ? null : slice.getMetadata().getNamespace() + "/" + service;
  }

  /** Marks the Service an object belongs to changed. */
  private final class Changed<T> implements ResourceEventHandler<T> {
    private final java.util.function.Function<T, String> serviceKey;

    Changed(java.util.function.Function<T, String> serviceKey) {
      this.serviceKey = serviceKey;
    }

    @Override
    public void onAdd(T obj) {
      changed(serviceKey.apply(obj));
    }

    @Override
    public void onUpdate(T oldObj, T newObj) {
      changed(serviceKey.apply(oldObj));
      changed(serviceKey.apply(newObj));
    }

    @Override
    public void onDelete(T obj, boolean deletedFinalStateUnknown) {
      changed(serviceKey.apply(obj));
    }
  }
}
