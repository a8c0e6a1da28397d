package dev.portage.tunnel.e2e;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HTTP server upstream's test client fetches through the tunnel: {@code /success} answers 200
 * "success!", {@code /error} 500. JDK HTTP server on a loopback port.
 */
final class HttpBackend implements AutoCloseable {
  static final String SUCCESS_BODY = "success!";

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  HttpBackend() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
    server.createContext("/success", e -> respond(e, 200, SUCCESS_BODY));
    server.createContext("/error", e -> respond(e, 500, "error"));
    server.setExecutor(threads);
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  String address() {
    return "127.0.0.1:" + port();
  }

  private static void respond(HttpExchange e, int status, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    e.getResponseHeaders().set("Content-Type", "text/plain");
    e.sendResponseHeaders(status, b.length);
    try (OutputStream out = e.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
