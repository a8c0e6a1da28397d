package dev.portage.bench.soak;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The hub's upstream: a small HTTP server that answers like a Kubernetes API server for a fixed set
 * of pods in namespace {@code default} ({@code /readyz}, pod list, single pod, 404 Status otherwise).
 * The harness stops and starts it on the same port to take the hub's cloud away. Start and stop are
 * called from one thread at a time.
 */
final class FakeApiServer implements AutoCloseable {
  static final int PODS = 20;
  static final String NAMESPACE = "default";
  private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final int port;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private HttpServer server;

  FakeApiServer(int port) {
    this.port = port;
  }

  static String podName(int i) {
    return "soak-pod-" + i;
  }

  private static String pod(int i, boolean withKind) {
    return "{" + (withKind ? "\"apiVersion\":\"v1\",\"kind\":\"Pod\"," : "")
        + "\"metadata\":{\"name\":\"" + podName(i) + "\",\"namespace\":\"" + NAMESPACE + "\","
        + "\"uid\":\"00000000-0000-0000-0000-" + String.format("%012d", i) + "\","
        + "\"resourceVersion\":\"" + (100 + i) + "\",\"labels\":{\"app\":\"soak\"}},"
        + "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]},"
        + "\"status\":{\"phase\":\"Running\"}}";
  }

  private static String podList() {
    List<String> items = new ArrayList<>();
    for (int i = 0; i < PODS; i++) {
      items.add(pod(i, false));
    }
    return "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"200\"},"
        + "\"items\":[" + String.join(",", items) + "]}";
  }

  /** Binds the port (retrying while the old listener's address is still held) and serves. */
  void start() throws IOException, InterruptedException {
    IOException last = null;
    for (int attempt = 0; attempt < 50; attempt++) {
      try {
        HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 256);
        s.setExecutor(threads);
        s.createContext("/", this::handle);
        s.start();
        server = s;
        return;
      } catch (BindException e) {
        last = e;
        LockSupport.parkNanos(RETRY_PAUSE_NANOS);
        if (Thread.interrupted()) {
          throw new InterruptedException("binding port " + port);
        }
      }
    }
    throw last;
  }

  /** Closes the listener and every open exchange at once, like a crashed API server. */
  void stop() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      ex.getRequestBody().readAllBytes();
      String path = ex.getRequestURI().getPath();
      String prefix = "/api/v1/namespaces/" + NAMESPACE + "/pods";
      if (path.equals("/readyz") || path.equals("/healthz") || path.equals("/livez")) {
        send(ex, 200, "text/plain", "ok");
      } else if (!"GET".equals(ex.getRequestMethod())) {
        send(ex, 405, "application/json", status(405, "MethodNotAllowed", "read-only soak API server"));
      } else if (path.equals(prefix)) {
        send(ex, 200, "application/json", podList());
      } else if (path.startsWith(prefix + "/")) {
        String name = path.substring(prefix.length() + 1);
        for (int i = 0; i < PODS; i++) {
          if (podName(i).equals(name)) {
            send(ex, 200, "application/json", pod(i, true));
            return;
          }
        }
        send(ex, 404, "application/json", status(404, "NotFound", "pods \"" + name + "\" not found"));
      } else {
        send(ex, 404, "application/json", status(404, "NotFound", "the server could not find the requested resource"));
      }
    }
  }

  private static String status(int code, String reason, String message) {
    return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\""
        + message.replace("\"", "\\\"") + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}";
  }

  private static void send(HttpExchange ex, int code, String type, String body) throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    stop();
    threads.shutdownNow();
  }
}
