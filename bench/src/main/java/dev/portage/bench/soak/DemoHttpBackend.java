package dev.portage.bench.soak;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A demo HTTP backend for the service proxy and sidecar: {@code GET /api/<seed>?n=<len>} answers 200
 * with the {@code len} bytes of {@link Payloads#bytes payload seed}, so the client can verify the
 * body; anything else is 404. Several run on one port, each on its own loopback address
 * (127.0.0.11, .12, ...), so one EndpointSlice can list them. Thread-safe.
 */
final class DemoHttpBackend implements AutoCloseable {
  static final int MAX_LENGTH = 1 << 20;

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final String address;

  DemoHttpBackend(String address, int port) throws IOException {
    this.address = address;
    server = HttpServer.create(new InetSocketAddress(address, port), 256);
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getPath();
      String query = ex.getRequestURI().getQuery();
      ex.getRequestBody().readAllBytes();
      if (!"GET".equals(ex.getRequestMethod()) || !path.startsWith("/api/") || query == null
          || !query.startsWith("n=")) {
        ex.sendResponseHeaders(404, -1);
        return;
      }
      long seed;
      int n;
      try {
        seed = Long.parseLong(path.substring("/api/".length()));
        n = Integer.parseInt(query.substring(2));
      } catch (NumberFormatException e) {
        ex.sendResponseHeaders(400, -1);
        return;
      }
      if (n < 0 || n > MAX_LENGTH) {
        ex.sendResponseHeaders(400, -1);
        return;
      }
      byte[] body = Payloads.bytes(seed, n);
      ex.getResponseHeaders().set("X-Backend", address);
      ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
      ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
