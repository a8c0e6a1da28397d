package dev.portage.cli.quickstart;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quickstart's own control listener: {@code POST /upstream/offline} stops the mock API server,
 * {@code POST /upstream/online} starts it again, {@code GET /upstream} says which it is. Stopping and
 * starting block, so requests run on one worker thread of their own (not an event loop); one at a
 * time, so an offline and an online never interleave.
 */
public final class QuickstartAdmin implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(QuickstartAdmin.class);

  private final HttpServer server;
  private final ExecutorService worker;
  private final MockApiServer api;

  private QuickstartAdmin(HttpServer server, ExecutorService worker, MockApiServer api) {
    this.server = server;
    this.worker = worker;
    this.api = api;
  }

  /** Binds {@code host:port} (0 = a free port) and starts serving. */
  public static QuickstartAdmin start(String host, int port, MockApiServer api) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
    ExecutorService worker = Executors.newSingleThreadExecutor(
        Thread.ofPlatform().daemon().name("portage-quickstart-admin").factory());
    QuickstartAdmin admin = new QuickstartAdmin(server, worker, api);
    server.createContext("/", admin::handle);
    server.setExecutor(worker);
    server.start();
    log.info("quickstart admin listening on {}", admin.address());
    return admin;
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  private void handle(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    String method = exchange.getRequestMethod();
    try (exchange) {
      try {
        route(exchange, method, path);
      } catch (RuntimeException e) {
        log.warn("quickstart admin: {} {} failed", method, path, e);
        respond(exchange, 500, "failed: " + e.getMessage() + "\n");
      }
    }
  }

  private void route(HttpExchange exchange, String method, String path) throws IOException {
    switch (path) {
      case "/upstream/offline", "/upstream/online" -> {
        if (!method.equals("POST")) {
          exchange.getResponseHeaders().set("Allow", "POST");
          respond(exchange, 405, "method " + method + " not allowed (expected: POST)\n");
          return;
        }
        if (path.endsWith("offline")) {
          api.offline();
        } else {
          api.online();
        }
        respond(exchange, 200, "mock API server " + api.url() + " is "
            + (api.isOnline() ? "online" : "offline") + "\n");
      }
      case "/upstream" -> respond(exchange, 200, api.isOnline() ? "online\n" : "offline\n");
      default -> respond(exchange, 404,
          "unknown path " + path + " (expected: POST /upstream/offline, POST /upstream/online,"
              + " GET /upstream)\n");
    }
  }

  private static void respond(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    worker.shutdownNow();
  }
}
