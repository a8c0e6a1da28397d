package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A bodiless idempotent request is sent once more when its upstream connection dies before answering. */
class UpstreamConnectionRetryTest {

  private final FakeClock clock = new FakeClock();
  private MeshFixture mesh;
  private DropFirstBackend backend;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    backend = new DropFirstBackend();
    mesh.service("flaky");
    mesh.endpoint("flaky", "1", backend.socket.getLocalPort());
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
    backend.close();
  }

  @Test
  void getIsSentAgainOnAnotherConnectionWhenTheFirstDiesBeforeAnswering() throws Exception {
    RawHttp.Response r = RawHttp.send(mesh.sidecar.outboundAddress(), "GET", MeshFixture.authority("flaky"), "/x");
    assertThat(r.status()).isEqualTo(200);
    assertThat(backend.dropped.get()).isEqualTo(1);
    assertThat(backend.served.get()).isEqualTo(1);
  }

  @Test
  void postIsNotSentAgain() throws Exception {
    RawHttp.Response r = RawHttp.send(mesh.sidecar.outboundAddress(), "POST", MeshFixture.authority("flaky"), "/x");
    assertThat(r.status()).isEqualTo(502);
    assertThat(backend.dropped.get()).isEqualTo(1);
    assertThat(backend.served.get()).isZero();
  }

  /** Reads each request head; closes the first connection without answering, answers the rest. */
  private static final class DropFirstBackend implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final AtomicInteger dropped = new AtomicInteger();
    final AtomicInteger served = new AtomicInteger();
    private final Thread acceptor = Thread.ofPlatform().daemon().start(this::acceptLoop);

    DropFirstBackend() throws IOException {}

    private void acceptLoop() {
      while (!socket.isClosed()) {
        try (Socket s = socket.accept()) {
          readHead(s.getInputStream());
          if (dropped.get() == 0) {
            dropped.incrementAndGet();
            continue; // closed by try-with-resources, no answer
          }
          served.incrementAndGet();
          OutputStream out = s.getOutputStream();
          out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
              .getBytes(StandardCharsets.US_ASCII));
          out.flush();
        } catch (IOException e) {
          // socket closed at the end of the test
        }
      }
    }

    private static void readHead(InputStream in) throws IOException {
      int matched = 0;
      int c;
      while (matched < 4 && (c = in.read()) >= 0) {
        matched = (c == "\r\n\r\n".charAt(matched)) ? matched + 1 : (c == '\r' ? 1 : 0);
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
      acceptor.join(10_000);
    }
  }
}
