package dev.portage.cli.quickstart;

import io.fabric8.kubernetes.api.model.APIGroupListBuilder;
import io.fabric8.kubernetes.api.model.APIResourceBuilder;
import io.fabric8.kubernetes.api.model.APIResourceListBuilder;
import io.fabric8.kubernetes.api.model.APIVersionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quickstart's Kubernetes API server: fabric8's mock server in CRUD mode (a real HTTP server
 * that stores what it is sent), seeded with namespace {@value #NAMESPACE} and a few pods, and
 * serving the discovery documents kubectl needs. {@link #offline()} stops it and {@link #online()}
 * starts it again on the same port with the same objects, so the edge hub in front of it can be
 * seen answering from its cache. Thread-safe; every method blocks while the server stops or starts.
 */
public final class MockApiServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(MockApiServer.class);

  /** The namespace the seeded pods live in. */
  public static final String NAMESPACE = "demo";

  /** The seeded pods, by name. */
  public static final List<String> PODS = List.of("web-0", "web-1", "db-0");

  private final InetAddress address;
  private final Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
  // One dispatcher for every incarnation: it holds the stored objects across offline/online.
  private final KubernetesMixedDispatcher dispatcher = new KubernetesMixedDispatcher(expectations);
  private KubernetesMockServer server; // guarded by this; null while offline
  private int port; // guarded by this
  private boolean closed; // guarded by this
  private boolean discoveryAdded; // guarded by this

  private MockApiServer(InetAddress address) {
    this.address = address;
  }

  /**
   * Starts the server on {@code host:port} (0 = a free port) and seeds it.
   *
   * @throws IOException if the port cannot be bound
   */
  public static MockApiServer start(String host, int port) throws IOException {
    MockApiServer api = new MockApiServer(InetAddress.getByName(host));
    try {
      api.bind(port);
      api.seed();
    } catch (RuntimeException e) {
      api.close();
      throw new IOException("mock API server on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    log.info("mock Kubernetes API server listening on {}", api.address());
    return api;
  }

  private void bind(int wanted) {
    KubernetesMockServer s =
        new KubernetesMockServer(new Context(), new MockWebServer(), expectations, dispatcher, false);
    s.init(address, wanted);
    server = s;
    port = s.getPort();
    if (!discoveryAdded) { // the expectations outlive restarts (init adds its own, e.g. /version)
      discovery(s);
      discoveryAdded = true;
    }
  }

  /** kubectl's discovery documents (it adds {@code ?timeout=...} to these requests). */
  private static void discovery(KubernetesMockServer s) {
    Map<String, Object> docs = Map.of(
        "/api", new APIVersionsBuilder().withVersions("v1").build(),
        "/apis", new APIGroupListBuilder().build(),
        "/api/v1", new APIResourceListBuilder().withGroupVersion("v1")
            .withResources(
                new APIResourceBuilder().withName("pods").withKind("Pod").withNamespaced(true)
                    .withSingularName("pod").withShortNames("po")
                    .withVerbs("get", "list", "watch", "create", "update", "patch", "delete")
                    .build(),
                new APIResourceBuilder().withName("namespaces").withKind("Namespace")
                    .withNamespaced(false).withSingularName("namespace").withShortNames("ns")
                    .withVerbs("get", "list", "watch", "create", "delete").build())
            .build());
    docs.forEach((path, doc) -> {
      for (String query : List.of("", "?timeout=10s", "?timeout=32s")) {
        s.expect().get().withPath(path + query).andReturn(200, doc).always();
      }
    });
  }

  private void seed() {
    try (KubernetesClient client = server.createClient()) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE)
          .endMetadata().build()).create();
      client.pods().inNamespace(NAMESPACE).resource(pod("web-0", "web")).create();
      client.pods().inNamespace(NAMESPACE).resource(pod("web-1", "web")).create();
      client.pods().inNamespace(NAMESPACE).resource(pod("db-0", "db")).create();
    }
  }

  /** A pod of the demo namespace, as the seed and the quickstart's check create it. */
  public static Pod pod(String name, String app) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace(NAMESPACE)
        .addToLabels("app", app).endMetadata()
        .withNewSpec().withNodeName("edge-node-1").addNewContainer().withName(app)
        .withImage("nginx:1.27").endContainer().endSpec().build();
  }

  /** Where the server listens (also while offline: the port it will come back on). */
  public synchronized InetSocketAddress address() {
    return new InetSocketAddress(address, port);
  }

  /** The URL to give the hub's {@code --server-addr}. */
  public String url() {
    InetSocketAddress a = address();
    String host = a.getAddress().getHostAddress();
    return "http://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  public synchronized boolean isOnline() {
    return server != null;
  }

  /** Stops the server (connections are closed); its objects are kept. Idempotent. */
  public synchronized void offline() {
    if (server != null) {
      try {
        server.destroy();
      } catch (IllegalStateException e) {
        // The mock gives its Vert.x server 10 s to close; on a busy host that can run out. The
        // port still closes in the background, and the demo goes on.
        log.warn("mock API server {} did not close cleanly: {}", url(), e.toString());
      }
      server = null;
      log.info("mock API server {} is offline", url());
    }
  }

  /**
   * Starts the server again on the same port with the same objects. Idempotent.
   *
   * @throws IllegalStateException if closed
   */
  public synchronized void online() {
    if (closed) {
      throw new IllegalStateException("mock API server is closed");
    }
    if (server == null) {
      bind(port);
      log.info("mock API server {} is online", url());
    }
  }

  /** A fabric8 client talking to the server directly (not through the hub). */
  public synchronized KubernetesClient directClient() {
    if (server == null) {
      throw new IllegalStateException("mock API server is offline");
    }
    return server.createClient();
  }

  @Override
  public synchronized void close() {
    closed = true;
    offline();
  }
}
