package dev.portage.bench.serviceproxy;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The Kubernetes API server of the service proxy benchmark: fabric8's mock server in CRUD mode (a
 * real HTTP API server with list and watch) on 127.0.0.1, a kubeconfig pointing at it, and helpers
 * that create Services and EndpointSlices as a cluster would hold them. Not thread-safe.
 */
final class ApiServer implements AutoCloseable {

  private final KubernetesMockServer server;
  private final KubernetesClient client;
  private final Path kubeconfig;

  ApiServer() throws IOException {
    server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
        new KubernetesCrudDispatcher(), false);
    server.init(InetAddress.getLoopbackAddress(), 0);
    client = server.createClient();
    kubeconfig = Files.createTempFile("service-proxy-bench", ".kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: bench
          cluster:
            server: http://127.0.0.1:%d
        contexts:
        - name: bench
          context:
            cluster: bench
            user: bench
        current-context: bench
        users:
        - name: bench
          user:
            token: bench
        """.formatted(server.getPort()));
  }

  Path kubeconfig() {
    return kubeconfig;
  }

  /** Creates Service {@code name} on {@code clusterIp:port} (TCP), optionally with a NodePort. */
  void service(String name, String clusterIp, int port) {
    client.services().resource(serviceObject(name, clusterIp, port)).create();
  }

  /** Creates the EndpointSlice of Service {@code name} with {@code ips} on {@code targetPort}. */
  void slice(String name, List<String> ips, int targetPort) {
    client.discovery().v1().endpointSlices().resource(sliceObject(name, ips, targetPort)).create();
  }

  /**
   * Creates {@code count} Services named {@code prefix-i}, each with an EndpointSlice of {@code
   * endpoints} addresses that nothing answers on (10.128.0.0/10), using a few threads.
   */
  void fakeServices(String prefix, int first, int count, int endpoints) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = first; i < first + count; i++) {
        int n = i;
        done.add(pool.submit(() -> {
          String name = prefix + "-" + n;
          List<String> ips = new ArrayList<>();
          for (int e = 0; e < endpoints; e++) {
            int k = n * endpoints + e;
            ips.add("10." + (128 + (k >> 16)) + "." + ((k >> 8) & 255) + "." + (k & 255));
          }
          service(name, clusterIp(n), 80);
          slice(name, ips, 8080);
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The ClusterIP of Service number {@code n} (10.100.0.0/14). */
  static String clusterIp(int n) {
    return "10." + (100 + (n >> 16)) + "." + ((n >> 8) & 255) + "." + (n & 255);
  }

  private static Service serviceObject(String name, String clusterIp, int port) {
    return new ServiceBuilder()
        .withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec().withType("ClusterIP").withClusterIP(clusterIp)
        .addNewPort().withName("p").withPort(port).withProtocol("TCP").endPort()
        .endSpec().build();
  }

  private static EndpointSlice sliceObject(String name, List<String> ips, int targetPort) {
    EndpointSliceBuilder b = new EndpointSliceBuilder()
        .withNewMetadata().withName(name + "-1").withNamespace("default")
        .addToLabels("kubernetes.io/service-name", name)
        .addToAnnotations("endpoints.kubernetes.io/last-change-trigger-time", Instant.now().toString())
        .endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withName("p").withPort(targetPort).withProtocol("TCP").endPort();
    for (String ip : ips) {
      b.addNewEndpoint().withAddresses(ip).withNodeName("bench-node")
          .withNewConditions().withReady(true).endConditions().endEndpoint();
    }
    return b.build();
  }

  @Override
  public void close() throws IOException {
    client.close();
    server.destroy();
    Files.deleteIfExists(kubeconfig);
  }
}
