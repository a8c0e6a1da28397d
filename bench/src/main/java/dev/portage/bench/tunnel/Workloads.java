package dev.portage.bench.tunnel;

import dev.portage.core.time.Ticker;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The measurements, each run against one {@link Route}. Stateless; blocking. */
final class Workloads {
  private static final Ticker TICKER = Ticker.system();

  private Workloads() {}

  /**
   * Streams {@code totalBytes} from the backend to the client, split over {@code streams} parallel
   * connections; returns bits per second over the wall time of the whole transfer.
   */
  static double throughput(Route route, long totalBytes, int streams) throws Exception {
    long each = totalBytes / streams;
    try (ExecutorService pool = Executors.newFixedThreadPool(streams)) {
      List<Future<Long>> done = new ArrayList<>();
      long start = TICKER.nanoTime();
      for (int i = 0; i < streams; i++) {
        done.add(pool.submit(() -> download(route, each)));
      }
      long bytes = 0;
      for (Future<Long> f : done) {
        bytes += f.get(30, TimeUnit.MINUTES);
      }
      long nanos = TICKER.nanoTime() - start;
      if (bytes != each * streams) {
        throw new IOException(route.name() + ": received " + bytes + " of " + each * streams + " bytes");
      }
      return bytes * 8.0 / (nanos / 1e9);
    }
  }

  private static long download(Route route, long bytes) throws IOException {
    try (Conn c = route.open()) {
      // One write (SOURCE + length): a gRPC route sends one DATA packet, not one per field.
      byte[] request = java.nio.ByteBuffer.allocate(9).put(BenchBackend.SOURCE).putLong(bytes).array();
      OutputStream out = c.out();
      out.write(request);
      out.flush();
      return c.drain();
    }
  }

  /**
   * {@code n} sequential connections, each timed from the start of the connect (CONNECT, DIAL_REQ or
   * TCP connect) to the echo of one byte; returns the sorted latencies in nanoseconds.
   */
  static long[] dialLatencies(Route route, int n) throws IOException {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      long start = TICKER.nanoTime();
      try (Conn c = route.open()) {
        echoOneByte(c);
        out[i] = TICKER.nanoTime() - start;
      }
    }
    Arrays.sort(out);
    return out;
  }

  private static final byte[] GET = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /**
   * {@code n} sequential connections, each timed from the start of the connect (TCP connect, TLS
   * handshake, CONNECT) to the end of the answer to one {@code GET /} (status line, headers and the
   * {@code Content-Length} body); returns the sorted latencies in nanoseconds.
   */
  static long[] getLatencies(Route route, int n) throws IOException {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      long start = TICKER.nanoTime();
      try (Conn c = route.open()) {
        getOnce(c);
        out[i] = TICKER.nanoTime() - start;
      }
    }
    Arrays.sort(out);
    return out;
  }

  /** Sends {@code GET /} and reads the whole answer, which must be a 200. */
  static void getOnce(Conn c) throws IOException {
    OutputStream o = c.out();
    o.write(GET);
    o.flush();
    InputStream in = c.in();
    StringBuilder head = new StringBuilder();
    while (head.length() < 8192 && !(head.length() >= 4 && head.lastIndexOf("\r\n\r\n") == head.length() - 4)) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("GET: the connection ended after " + head.length() + " bytes of the answer");
      }
      head.append((char) b);
    }
    if (!head.toString().startsWith("HTTP/1.1 200 ")) {
      throw new IOException("GET answered: " + head.toString().strip());
    }
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)\r\ncontent-length: *(\\d+)").matcher(head);
    long body = m.find() ? Long.parseLong(m.group(1)) : 0;
    in.skipNBytes(body); // EOFException when short
  }

  static void echoOneByte(Conn c) throws IOException {
    OutputStream o = c.out();
    o.write(new byte[] {BenchBackend.ECHO, 42});
    o.flush();
    if (c.in().read() != 42) {
      throw new IOException("echo failed");
    }
  }

  /**
   * Opens up to {@code n} connections with {@code parallel} threads, each checked with a one-byte
   * echo, and returns those that opened (the caller closes them). Stops at the first failure.
   */
  static List<Conn> openIdle(Route route, int n, int parallel) throws InterruptedException {
    List<Conn> open = java.util.Collections.synchronizedList(new ArrayList<>(n));
    java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<Exception> failure = new java.util.concurrent.atomic.AtomicReference<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(parallel)) {
      for (int t = 0; t < parallel; t++) {
        pool.execute(() -> {
          while (failure.get() == null && next.getAndIncrement() < n) {
            try {
              Conn c = route.open();
              open.add(c);
              echoOneByte(c);
            } catch (Exception e) {
              failure.compareAndSet(null, e);
            }
          }
        });
      }
    }
    if (failure.get() != null) {
      System.err.println(route.name() + ": stopped after " + open.size() + " idle connections: " + failure.get());
    }
    return open;
  }

  static long percentile(long[] sorted, double p) {
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
