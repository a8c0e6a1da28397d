package dev.portage.bench.soak;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

/**
 * One tunnel worker's request: HTTP CONNECT to a server replica (alternating), then a random payload
 * of 1 KiB to 4 MiB written by a virtual thread while this thread reads the echo back and checks
 * its CRC32C and length. A transfer that completes with different bytes is a checksum mismatch; one
 * that breaks off is a failure. Each call is independent; one instance per worker thread.
 */
final class TunnelClient {
  static final int MIN_SIZE = 1024;
  static final int MAX_SIZE = 4 << 20;

  private final List<InetSocketAddress> servers;
  private final int echoPort;
  private final PathStats stats;
  private final SoakClock clock;
  private final int timeoutMillis;
  private long turn;

  TunnelClient(List<InetSocketAddress> servers, int echoPort, PathStats stats, SoakClock clock, int timeoutMillis) {
    this.servers = List.copyOf(servers);
    this.echoPort = echoPort;
    this.stats = stats;
    this.clock = clock;
    this.timeoutMillis = timeoutMillis;
  }

  /** Log-uniform between {@link #MIN_SIZE} and {@link #MAX_SIZE}: mostly small, some large. */
  static int size(SplittableRandom random) {
    double lo = Math.log(MIN_SIZE);
    double hi = Math.log(MAX_SIZE);
    return (int) Math.min(MAX_SIZE, Math.round(Math.exp(lo + random.nextDouble() * (hi - lo))));
  }

  /** Runs one request and records it; returns whether it succeeded. */
  boolean once(SplittableRandom random) {
    int index = (int) (turn++ % servers.size());
    InetSocketAddress server = servers.get(index);
    int size = size(random);
    long seed = random.nextLong();
    long start = clock.now();
    stats.attempt();
    String where = "server-" + (index + 1) + " " + size + " B";
    AtomicReference<IOException> writeError = new AtomicReference<>();
    Thread writer = null;
    try (Socket s = new Socket()) {
      s.connect(server, timeoutMillis);
      s.setSoTimeout(timeoutMillis);
      s.setTcpNoDelay(true);
      OutputStream out = s.getOutputStream();
      InputStream in = new BufferedInputStream(s.getInputStream(), 64 * 1024);
      String target = "127.0.0.1:" + echoPort;
      out.write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String head = readHead(in);
      String statusLine = head.lines().findFirst().orElse("");
      if (!statusLine.matches("HTTP/1\\.[01] 200.*")) {
        stats.failure(start, clock.now(), false, where + ": CONNECT answered '" + statusLine + "' " + snippet(in));
        return false;
      }
      byte[] payload = Payloads.bytes(seed, size);
      writer = Thread.ofVirtual().start(() -> {
        try {
          for (int off = 0; off < payload.length; off += 64 * 1024) {
            out.write(payload, off, Math.min(64 * 1024, payload.length - off));
          }
          out.flush();
        } catch (IOException e) {
          writeError.set(e);
        }
      });
      CRC32C crc = new CRC32C();
      byte[] buf = new byte[64 * 1024];
      int got = 0;
      while (got < size) {
        int n = in.read(buf, 0, Math.min(buf.length, size - got));
        if (n < 0) {
          IOException w = writeError.get();
          stats.failure(start, clock.now(), false, where + ": EOF after " + got + " B echoed"
              + (w == null ? "" : " (write: " + w.getMessage() + ")"));
          return false;
        }
        crc.update(buf, 0, n);
        got += n;
      }
      long expected = Payloads.crc(payload);
      if (crc.getValue() != expected) {
        stats.mismatch(start, clock.now(), where + ": crc " + Long.toHexString(crc.getValue())
            + " != " + Long.toHexString(expected));
        return false;
      }
      stats.success(size);
      return true;
    } catch (SocketTimeoutException e) {
      stats.failure(start, clock.now(), true, where + ": no progress for " + timeoutMillis + " ms");
    } catch (IOException e) {
      stats.failure(start, clock.now(), false, where + ": " + e);
    } finally {
      if (writer != null) {
        try {
          writer.join(timeoutMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    return false;
  }

  /** The response head up to the blank line (at most 8 KiB). */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (head.size() < 8192) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed in the CONNECT answer after '"
            + head.toString(StandardCharsets.US_ASCII).strip() + "'");
      }
      head.write(b);
      state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
          ? state + 1 : (b == '\r' ? 1 : 0);
      if (state == 4) {
        return head.toString(StandardCharsets.US_ASCII);
      }
    }
    throw new IOException("CONNECT answer head over 8 KiB");
  }

  /** Up to 120 bytes of what follows a refused CONNECT (the server's error text). */
  private static String snippet(InputStream in) {
    try {
      byte[] b = in.readNBytes(120);
      return new String(b, StandardCharsets.UTF_8).replaceAll("\\s+", " ").strip();
    } catch (IOException e) {
      return "";
    }
  }
}
