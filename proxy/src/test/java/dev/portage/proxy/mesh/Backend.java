package dev.portage.proxy.mesh;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP/1.1 backend (JDK HttpServer on 127.0.0.1, port 0) whose behaviour a test sets per
 * path; records every request's headers.
 */
final class Backend implements AutoCloseable {

  /** What the backend does with one exchange. */
  interface Behaviour {
    void handle(HttpExchange ex) throws Exception;
  }

  final String name;
  final HttpServer server;
  final ExecutorService executor = Executors.newCachedThreadPool();
  final AtomicInteger hits = new AtomicInteger();
  final List<Map<String, List<String>>> requestHeaders = new CopyOnWriteArrayList<>();
  volatile Behaviour behaviour = ex -> reply(ex, 200, "hello from " + ex.getRequestURI().getPath());

  Backend(String name) throws IOException {
    this(name, 0);
  }

  /** A backend on 127.0.0.1:{@code port} (0: any free port). */
  Backend(String name, int port) throws IOException {
    this.name = name;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.setExecutor(executor);
    server.createContext("/", ex -> {
      hits.incrementAndGet();
      requestHeaders.add(Map.copyOf(ex.getRequestHeaders()));
      try {
        behaviour.handle(ex);
      } catch (Exception e) {
        ex.close();
      }
    });
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  static void reply(HttpExchange ex, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getRequestBody().readAllBytes();
    ex.getResponseHeaders().set("X-Backend", "yes");
    ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
