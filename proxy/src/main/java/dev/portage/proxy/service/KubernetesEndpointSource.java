package dev.portage.proxy.service;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.netty.util.NetUtil;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Services from the Kubernetes API, as kube-proxy reads them: informers on Services and
 * EndpointSlices (discovery.k8s.io/v1) in every namespace. Each TCP port of a Service that has a
 * cluster IP becomes one service named {@code namespace/name:port-name} (kube-proxy's
 * ServicePortName), listening on the configured bind host and the Service port; its endpoints are
 * the ready addresses of the slices labelled {@code kubernetes.io/service-name} with the same port
 * name. {@code sessionAffinity: ClientIP} and its {@code timeoutSeconds} carry over.
 *
 * <p>Informer events of both kinds (on fabric8's threads) rebuild the whole state under one lock,
 * once both informers have listed.
 */
final class KubernetesEndpointSource implements EndpointSource {

  private static final Logger log = LoggerFactory.getLogger(KubernetesEndpointSource.class);
  static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

  private final KubernetesClient client;
  private final boolean ownsClient;
  private final InetAddress bindHost;
  private final Object lock = new Object();
  private Consumer<Map<String, dev.portage.proxy.service.ServiceSpec>> listener; // guarded by lock
  private SharedIndexInformer<Service> services; // guarded by lock
  private SharedIndexInformer<EndpointSlice> slices; // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param client the API client; closed by {@link #close()} only if {@code ownsClient}
   * @param bindHost the host every listener binds
   */
  KubernetesEndpointSource(KubernetesClient client, boolean ownsClient, String bindHost) {
    this.client = Objects.requireNonNull(client, "client");
    this.ownsClient = ownsClient;
    try {
      this.bindHost = InetAddress.getByName(Objects.requireNonNull(bindHost, "bindHost"));
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("bindAddress: " + bindHost + " (unknown host)", e);
    }
  }

  /** A source with its own client from {@code kubeconfig}, or the in-cluster/default config when null. */
  static KubernetesEndpointSource fromKubeconfig(Path kubeconfig, String bindHost) throws IOException {
    Config config = kubeconfig == null
        ? Config.autoConfigure(null)
        : Config.fromKubeconfig(Files.readString(kubeconfig));
    return new KubernetesEndpointSource(
        new KubernetesClientBuilder().withConfig(config).build(), true, bindHost);
  }

  @Override
  public void start(Consumer<Map<String, dev.portage.proxy.service.ServiceSpec>> listener) {
    Objects.requireNonNull(listener, "listener");
    synchronized (lock) {
      if (this.listener != null || closed) {
        throw new IllegalStateException("kubernetes source: already started or closed");
      }
      this.listener = listener;
      services = client.services().inAnyNamespace().runnableInformer(0);
      slices = client.discovery().v1().endpointSlices().inAnyNamespace().runnableInformer(0);
      services.addEventHandler(new Rebuild<>());
      slices.addEventHandler(new Rebuild<>());
      // start() keeps retrying the first list in the background: an API server that is not there
      // yet delays readiness instead of failing the proxy.
      services.start().thenCombine(slices.start(), (a, b) -> null).thenRun(this::rebuild);
    }
    log.info("Kubernetes source started (Services and EndpointSlices, listeners on {})",
        bindHost.getHostAddress());
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

  /** Recomputes and delivers the whole state; on an informer thread. */
  private void rebuild() {
    synchronized (lock) {
      if (closed || !services.hasSynced() || !slices.hasSynced()) {
        return;
      }
      Map<String, dev.portage.proxy.service.ServiceSpec> state =
          desiredState(services.getStore().list(), slices.getStore().list());
      log.debug("Kubernetes source: {} service ports", state.size());
      listener.accept(state);
    }
  }

  /** The service ports {@code services} and {@code slices} describe, by name. */
  Map<String, dev.portage.proxy.service.ServiceSpec> desiredState(
      List<Service> services, List<EndpointSlice> slices) {
    Map<String, List<EndpointSlice>> slicesByService = new HashMap<>();
    for (EndpointSlice slice : slices) {
      Map<String, String> labels = slice.getMetadata().getLabels();
      String service = labels == null ? null : labels.get(SERVICE_NAME_LABEL);
      if (service != null) {
        slicesByService
            .computeIfAbsent(slice.getMetadata().getNamespace() + "/" + service, k -> new ArrayList<>())
            .add(slice);
      }
    }
    Map<String, dev.portage.proxy.service.ServiceSpec> state = new TreeMap<>();
    for (Service service : services) {
      ServiceSpec spec = service.getSpec();
      if (spec == null || spec.getPorts() == null || "ExternalName".equals(spec.getType())
          || "None".equals(spec.getClusterIP())) {
        continue; // kube-proxy skips ExternalName and headless Services
      }
      String key = key(service);
      Duration affinity = affinity(spec);
      for (ServicePort port : spec.getPorts()) {
        if (port.getProtocol() != null && !"TCP".equals(port.getProtocol())) {
          continue;
        }
        String portName = port.getName() == null ? "" : port.getName();
        String name = key + (portName.isEmpty() ? "" : ":" + portName);
        List<InetSocketAddress> endpoints =
            endpoints(slicesByService.getOrDefault(key, List.of()), portName);
        state.put(name, new dev.portage.proxy.service.ServiceSpec(
            name, new InetSocketAddress(bindHost, port.getPort()), endpoints,
            BalancerKind.ROUND_ROBIN, affinity, null));
      }
    }
    return state;
  }

  private static List<InetSocketAddress> endpoints(List<EndpointSlice> slices, String portName) {
    Set<InetSocketAddress> endpoints = new LinkedHashSet<>();
    for (EndpointSlice slice : slices) {
      if (slice.getPorts() == null || slice.getEndpoints() == null) {
        continue;
      }
      Integer number = null;
      for (EndpointPort port : slice.getPorts()) {
        String name = port.getName() == null ? "" : port.getName();
        if (name.equals(portName) && (port.getProtocol() == null || "TCP".equals(port.getProtocol()))) {
          number = port.getPort();
        }
      }
      if (number == null) {
        continue;
      }
      for (var endpoint : slice.getEndpoints()) {
        // Like kube-proxy: a missing ready condition means ready.
        if (endpoint.getConditions() != null && Boolean.FALSE.equals(endpoint.getConditions().getReady())) {
          continue;
        }
        for (String address : endpoint.getAddresses()) {
          byte[] ip = NetUtil.createByteArrayFromIpAddressString(address);
          if (ip == null) {
            log.debug("EndpointSlice {}: skipping address {}: not an IP", slice.getMetadata().getName(), address);
            continue;
          }
          try {
            endpoints.add(new InetSocketAddress(InetAddress.getByAddress(ip), number));
          } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are always an address", e);
          }
        }
      }
    }
    return List.copyOf(endpoints);
  }

  private static Duration affinity(ServiceSpec spec) {
    if (!"ClientIP".equals(spec.getSessionAffinity())) {
      return null;
    }
    var config = spec.getSessionAffinityConfig();
    Integer seconds = config == null || config.getClientIP() == null
        ? null : config.getClientIP().getTimeoutSeconds();
    return seconds == null || seconds <= 0
        ? dev.portage.proxy.service.ServiceSpec.DEFAULT_AFFINITY_TIMEOUT
        : Duration.ofSeconds(seconds);
  }

  private static String key(HasMetadata object) {
    return object.getMetadata().getNamespace() + "/" + object.getMetadata().getName();
  }

  /** Any change of either kind rebuilds the whole state. */
  private final class Rebuild<T> implements ResourceEventHandler<T> {
    @Override
    public void onAdd(T obj) {
      rebuild();
    }

    @Override
    public void onUpdate(T oldObj, T newObj) {
      rebuild();
    }

    @Override
    public void onDelete(T obj, boolean deletedFinalStateUnknown) {
      rebuild();
    }

    @Override
    public void onNothing() {
      rebuild();
    }
  }
}
