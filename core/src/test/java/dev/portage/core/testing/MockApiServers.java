package dev.portage.core.testing;

import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts and stops fabric8's mock Kubernetes API server so that a busy machine cannot fail a test
 * through the mock's own plumbing. The mock waits at most 10 s for its Vert.x server to listen and
 * again to close; on a loaded CI host either wait has run out (or failed) after the test itself
 * passed, which said nothing about the code under test. Starting retries with a fresh server;
 * closing logs the mock's error with its cause and moves on (the port is ephemeral and Vert.x
 * finishes closing in the background).
 */
public final class MockApiServers {

  private static final Logger log = LoggerFactory.getLogger(MockApiServers.class);

  private static final int START_ATTEMPTS = 3;

  private MockApiServers() {}

  /**
   * A started mock in CRUD mode (an in-memory API server: lists, watches, writes), over HTTPS, built
   * as fabric8's {@code @EnableKubernetesMockClient(crud = true)} builds it: expectations set with
   * {@code expect()} answer first, everything else goes to the in-memory store.
   */
  public static KubernetesMockServer startCrud() {
    return start(
        () -> {
          Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
          return new KubernetesMockServer(
              new Context(Serialization.jsonMapper()),
              new MockWebServer(),
              expectations,
              new KubernetesMixedDispatcher(expectations),
              true);
        });
  }

  /** Starts the server {@code fresh} makes, with a new one for each attempt the mock fails to start. */
  public static KubernetesMockServer start(Supplier<KubernetesMockServer> fresh) {
    for (int attempt = 1; ; attempt++) {
      KubernetesMockServer server = fresh.get();
      try {
        server.init();
        return server;
      } catch (IllegalStateException e) {
        destroy(server);
        if (attempt == START_ATTEMPTS) {
          throw e;
        }
        log.warn("mock API server did not start (attempt {} of {}), trying a fresh one",
            attempt, START_ATTEMPTS, e);
      }
    }
  }

  /** Stops {@code server}; the mock's failure to close in time is logged, not thrown. */
  public static void destroy(KubernetesMockServer server) {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      log.warn("mock API server did not close cleanly; its port is left to close in the background", e);
    }
  }
}
