package dev.portage.cli.quickstart;

import dev.portage.core.time.TimeSource;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A demo HTTP backend for the quickstart, with the paths of upstream Konnectivity's test server:
 * {@code /success} (200 "success"), {@code /sleep?time=N} (answers after N seconds), {@code /error}
 * (500), {@code /close} (drops the connection), and {@code /} ("hello from NAME"). Every answer is
 * delayed by the backend's latency, so three backends of different speeds show what balancing does.
 * Delays are timers on a scheduler; no thread sleeps.
 */
public final class DemoBackend implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DemoBackend.class);

  private final String name;
  private final Duration latency;
  private final HttpServer server;
  private final ExecutorService executor;
  private final ScheduledExecutorService timers;

  private DemoBackend(String name, Duration latency, HttpServer server, ScheduledExecutorService timers,
      ExecutorService executor) {
    this.name = name;
    this.latency = latency;
    this.server = server;
    this.timers = timers;
    this.executor = executor;
  }

  /** Binds {@code host:port} (0 = ephemeral) and starts serving. */
  public static DemoBackend start(String name, String host, int port, Duration latency) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 128);
    ExecutorService executor = Executors.newFixedThreadPool(4, Thread.ofPlatform().daemon().name("demo-" + name + "-", 0).factory());
    ScheduledExecutorService timers =
        TimeSource.newTimer("demo-" + name + "-timer");
    DemoBackend backend = new DemoBackend(name, latency, server, timers, executor);
    server.createContext("/", backend::handle);
    server.setExecutor(executor);
    server.start();
    log.info("demo backend {} listening on {} (latency {} ms)", name, backend.address(), latency.toMillis());
    return backend;
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  public String name() {
    return name;
  }

  private void handle(HttpExchange exchange) {
    URI uri = exchange.getRequestURI();
    String path = uri.getPath();
    switch (path) {
      case "/success" -> later(latency, exchange, 200, "success");
      case "/error" -> later(latency, exchange, 500, "error");
      case "/close" -> exchange.close();
      case "/sleep" -> later(latency.plus(sleepParameter(uri)), exchange, 200, "slept");
      default -> later(latency, exchange, 200, "hello from " + name + "\n");
    }
  }

  private static Duration sleepParameter(URI uri) {
    String q = uri.getQuery() == null ? "" : uri.getQuery();
    for (String kv : q.split("&")) {
      if (kv.startsWith("time=")) {
        try {
          return Duration.ofSeconds(Math.max(0, Math.min(3600, Long.parseLong(kv.substring(5)))));
        } catch (NumberFormatException e) {
          return Duration.ZERO;
        }
      }
    }
    return Duration.ZERO;
  }

  private void later(Duration delay, HttpExchange exchange, int status, String body) {
    if (delay.isZero()) {
      respond(exchange, status, body);
    } else {
      timers.schedule(() -> executor.execute(() -> respond(exchange, status, body)), delay.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void respond(HttpExchange exchange, int status, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    try (exchange; OutputStream out = exchange.getResponseBody()) {
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      exchange.getResponseHeaders().set("X-Backend", name);
      exchange.sendResponseHeaders(status, bytes.length);
      out.write(bytes);
    } catch (IOException e) {
      log.debug("demo backend {}: client went away: {}", name, e.toString());
    }
  }

  @Override
  public void close() {
    server.stop(0);
    timers.shutdownNow();
    executor.shutdownNow();
  }
}
