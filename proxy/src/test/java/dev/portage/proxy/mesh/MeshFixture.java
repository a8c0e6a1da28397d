package dev.portage.proxy.mesh;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.portage.control.destination.DestinationConfig;
import dev.portage.control.destination.DestinationServer;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import dev.portage.core.time.TimeSource;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A real control plane (ResourceStore + DestinationServer over in-process gRPC) and a started
 * {@link Sidecar} using it, plus backends; everything closed by {@link #close()}.
 */
final class MeshFixture implements AutoCloseable {

  static final String NS = "default";
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  final String name = InProcessServerBuilder.generateName();
  final PrometheusRegistry registry = new PrometheusRegistry();
  final List<Backend> backends = new ArrayList<>();
  ResourceStore store = new ResourceStore();
  DestinationServer destinations;
  Server server;
  final ManagedChannel channel;
  final Sidecar sidecar;
  private int version;
  private final java.util.concurrent.ScheduledExecutorService serverTimer =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

  MeshFixture(TimeSource time, SidecarConfig.BalancerKind balancer) throws IOException {
    this(time, SidecarConfig.defaults("in-process:0").withPorts(0, 0).withBalancer(balancer));
  }

  /** A mesh whose sidecar runs with {@code config} (its destination address is not used). */
  MeshFixture(TimeSource time, SidecarConfig config) throws IOException {
    startControlPlane();
    channel = InProcessChannelBuilder.forName(name).build();
    sidecar = new Sidecar(config, time, registry, channel, new Random(42)).start();
  }

  void startControlPlane() throws IOException {
    destinations = new DestinationServer(
        DestinationConfig.defaults(), store, TimeSource.system(serverTimer), new PrometheusRegistry());
    server = InProcessServerBuilder.forName(name).addService(destinations.service()).build().start();
  }

  void stopControlPlane() throws InterruptedException {
    destinations.close();
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
  }

  Backend backend(String name) throws IOException {
    Backend b = new Backend(name);
    backends.add(b);
    return b;
  }

  synchronized void put(String yaml) {
    try {
      store.put(SourceObject.of(YAML.readTree(yaml), Integer.toString(++version)), 0);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** A Service {@code svc} with port 8080 named http. */
  void service(String svc) {
    put("""
        apiVersion: v1
        kind: Service
        metadata: {namespace: %s, name: %s}
        spec:
          ports:
          - {name: http, port: 8080, targetPort: 8080, protocol: TCP}
        """.formatted(NS, svc));
  }

  /** One EndpointSlice of {@code svc} per backend (each on 127.0.0.1 with its own port). */
  void endpoints(String svc, Backend... bs) {
    for (Backend b : bs) {
      endpoint(svc, b.name, b.port());
    }
  }

  /** An EndpointSlice {@code svc-name} listing 127.0.0.1:{@code port} as ready, listening or not. */
  void endpoint(String svc, String name, int port) {
    put("""
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata:
          namespace: %s
          name: %s-%s
          labels: {kubernetes.io/service-name: %s}
        addressType: IPv4
        ports:
        - {name: http, port: %d, protocol: TCP}
        endpoints:
        - addresses: ["127.0.0.1"]
          conditions: {ready: true}
        """.formatted(NS, svc, name, svc, port));
  }

  /** A ServiceProfile for {@code svc} with the given spec (YAML, indented by 2). */
  void profile(String svc, String spec) {
    put("""
        apiVersion: linkerd.io/v1alpha2
        kind: ServiceProfile
        metadata: {namespace: %s, name: %s.%s.svc.cluster.local}
        spec:
        %s
        """.formatted(NS, svc, NS, spec.indent(2).stripTrailing()));
  }

  /** Waits until a timer of {@code clock} due within {@code d} is pending (a request reached it), then advances. */
  static void advanceWhenPending(dev.portage.core.time.FakeClock clock, java.time.Duration d) {
    org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> {
      java.time.Duration next = clock.nextDeadline();
      return next != null && next.compareTo(d) <= 0;
    });
    clock.advance(d);
  }

  /** Waits until the sidecar holds {@code authority}'s profile with {@code n} routes. */
  void awaitProfileRoutes(String authority, int n) {
    org.awaitility.Awaitility.await().atMost(10, TimeUnit.SECONDS).until(() -> {
      sidecar.profiles().get(authority);
      return sidecar.profiles().peek(authority).routes().size() == n;
    });
  }

  static String authority(String svc) {
    return svc + "." + NS + ".svc.cluster.local:8080";
  }

  @Override
  public void close() throws Exception {
    sidecar.close();
    channel.shutdownNow();
    stopControlPlane();
    for (Backend b : backends) {
      b.close();
    }
    channel.awaitTermination(10, TimeUnit.SECONDS);
    serverTimer.shutdownNow();
  }
}
