package dev.portage.hub;

import dev.portage.core.testing.MockApiServers;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

/**
 * The fabric8 mock API server in CRUD mode, on the loopback address, that a test can stop and start
 * again on the same port with its objects kept (one dispatcher for every incarnation): the cloud
 * going away and coming back. Not thread-safe; the test thread drives it.
 */
final class CrudApiServer implements AutoCloseable {

  private final Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
  private final KubernetesMixedDispatcher dispatcher = new KubernetesMixedDispatcher(expectations);
  private KubernetesMockServer server; // null while stopped
  private int port;

  /** Starts on a free port. */
  static CrudApiServer start() {
    CrudApiServer s = new CrudApiServer();
    s.startAgain();
    return s;
  }

  /** Starts again on the port of the first start (a free one the first time). */
  void startAgain() {
    if (server != null) {
      throw new IllegalStateException("already running");
    }
    KubernetesMockServer s =
        new KubernetesMockServer(new Context(), new MockWebServer(), expectations, dispatcher, false);
    s.init(InetAddress.getLoopbackAddress(), port);
    port = s.getPort();
    server = s;
  }

  /** Stops listening; the objects stay for {@link #startAgain}. */
  void stop() {
    if (server != null) {
      MockApiServers.destroy(server);
      server = null;
    }
  }

  boolean running() {
    return server != null;
  }

  /** The running server (for expectations and recorded requests). */
  KubernetesMockServer server() {
    if (server == null) {
      throw new IllegalStateException("stopped");
    }
    return server;
  }

  int port() {
    return port;
  }

  String url() {
    return "http://127.0.0.1:" + port;
  }

  /** A client straight to the server, not through the hub. */
  KubernetesClient client() {
    return server().createClient();
  }

  @Override
  public void close() {
    stop();
  }
}
