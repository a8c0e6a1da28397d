package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.FakeClock;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code Upgrade} (a WebSocket watch, exec) through the hub to an API server that sends the
 * upgraded protocol's first bytes in the same write as its 101, as a server that has events ready
 * does: they reach the client, then the byte relay carries the rest both ways. Real sockets; the
 * API server is a raw socket server so the bytes on the wire are exactly these.
 */
class EdgeHubUpgradeTest {

  private static final String FIRST = "first-frame-sent-with-the-101";

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final ExecutorService upstreamThreads = Executors.newFixedThreadPool(4);
  private ServerSocket upstream;
  private EdgeHub hub;

  @AfterEach
  void tearDown() throws IOException {
    if (hub != null) {
      hub.close();
    }
    if (upstream != null) {
      upstream.close();
    }
    upstreamThreads.shutdownNow();
  }

  /** Answers /readyz with 200; an Upgrade with 101 and FIRST in one write, then echoes "echo:" + bytes. */
  private void serveUpstream() throws IOException {
    upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    upstreamThreads.execute(() -> {
      while (!upstream.isClosed()) {
        try {
          Socket s = upstream.accept();
          upstreamThreads.execute(() -> serve(s));
        } catch (IOException e) {
          return;
        }
      }
    });
  }

  private static void serve(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      while (true) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        if (!head.toLowerCase().contains("upgrade: websocket")) {
          out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          continue;
        }
        out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n" + FIRST)
            .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        byte[] buf = new byte[256];
        for (int n; (n = in.read(buf)) > 0; ) {
          out.write(("echo:" + new String(buf, 0, n, StandardCharsets.US_ASCII))
              .getBytes(StandardCharsets.US_ASCII));
          out.flush();
        }
        return;
      }
    } catch (IOException e) {
      // the test is over
    }
  }

  /** The request or response head up to the blank line; null at end of stream. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    for (int b; (b = in.read()) >= 0; ) {
      head.write(b);
      matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
      if (matched == 4) {
        return head.toString(StandardCharsets.US_ASCII);
      }
    }
    return null;
  }

  private static String readExactly(InputStream in, int n) throws IOException {
    return new String(in.readNBytes(n), StandardCharsets.US_ASCII);
  }

  @Test
  void bytesSentWithThe101ReachTheClientBeforeTheRelayTakesOver() throws Exception {
    serveUpstream();
    EdgeHubConfig config = EdgeHubConfig
        .defaults(List.of("http://127.0.0.1:" + upstream.getLocalPort()), dir.resolve("cache"))
        .withPorts(0, 0, 0);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
    for (int i = 0; i < 20; i++) { // each time: the first bytes come in the 101's read
      try (Socket client = new Socket(InetAddress.getLoopbackAddress(), hub.proxyAddress().getPort())) {
        client.setSoTimeout(10_000);
        client.getOutputStream().write(("GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\n"
            + "Host: hub\r\nUser-Agent: fabric8-kubernetes-client/7\r\nConnection: Upgrade\r\n"
            + "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        InputStream in = client.getInputStream();
        assertThat(readHead(in)).startsWith("HTTP/1.1 101 ");
        assertThat(readExactly(in, FIRST.length())).isEqualTo(FIRST);
        client.getOutputStream().write("ping".getBytes(StandardCharsets.US_ASCII));
        assertThat(readExactly(in, "echo:ping".length())).isEqualTo("echo:ping");
      }
    }
  }
}
