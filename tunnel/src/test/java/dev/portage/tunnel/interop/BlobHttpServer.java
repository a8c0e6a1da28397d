package dev.portage.tunnel.interop;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A loopback HTTP server whose {@code /blob} answers a fixed pseudo-random body, fetched by curl. */
final class BlobHttpServer implements AutoCloseable {
  final byte[] body;
  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  BlobHttpServer(int size) throws IOException {
    body = Payload.bytes(7, size);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(threads);
    server.createContext("/blob", ex -> {
      try (ex; OutputStream out = ex.getResponseBody()) {
        ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, body.length);
        out.write(body);
      }
    });
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/blob";
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
