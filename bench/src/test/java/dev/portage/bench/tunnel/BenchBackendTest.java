package dev.portage.bench.tunnel;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tunnel bench's backend on real loopback sockets: echo, source, and bad commands. */
class BenchBackendTest {
  private final BenchBackend backend;
  private final List<Socket> sockets = new ArrayList<>();

  BenchBackendTest() throws IOException {
    backend = new BenchBackend();
  }

  @AfterEach
  void tearDown() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    backend.close();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", backend.port());
    s.setSoTimeout(10_000);
    sockets.add(s);
    return s;
  }

  @Test
  void echoesEverythingAfterTheCommandByteOnEveryConnection() throws Exception {
    for (int i = 0; i < 20; i++) { // spread over the per-loop listeners
      Socket s = connect();
      s.getOutputStream().write(new byte[] {BenchBackend.ECHO, 42});
      assertThat(s.getInputStream().read()).isEqualTo(42);
      byte[] big = new byte[1 << 20];
      big[big.length - 1] = 7;
      Thread writer = Thread.ofVirtual().start(() -> {
        try {
          s.getOutputStream().write(big);
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      byte[] back = s.getInputStream().readNBytes(big.length);
      assertThat(back).isEqualTo(big);
      assertThat(writer.join(java.time.Duration.ofSeconds(10))).isTrue();
    }
  }

  @Test
  void sourcesTheRequestedBytesThenCloses() throws IOException {
    Socket s = connect();
    DataOutputStream out = new DataOutputStream(s.getOutputStream());
    out.writeByte(BenchBackend.SOURCE);
    out.writeShort(0); // the length may arrive split over reads
    out.flush();
    out.writeShort(0);
    out.writeInt(3 * 256 * 1024 + 5);
    out.flush();
    InputStream in = s.getInputStream();
    long got = 0;
    byte[] buf = new byte[64 * 1024];
    for (int n; (n = in.read(buf)) >= 0; ) {
      got += n;
    }
    assertThat(got).isEqualTo(3 * 256 * 1024 + 5);
  }

  @Test
  void anUnknownCommandClosesTheConnection() throws IOException {
    Socket s = connect();
    s.getOutputStream().write('?');
    assertThat(s.getInputStream().read()).isEqualTo(-1);
  }
}
