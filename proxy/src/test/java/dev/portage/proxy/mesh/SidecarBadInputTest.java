package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bad input on the sidecar's outbound listener over real sockets: each gets a clear HTTP error,
 * never a hang, and the sidecar keeps serving good requests afterwards.
 */
class SidecarBadInputTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  MeshFixture mesh;
  InetSocketAddress proxy;
  Backend backend;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    proxy = mesh.sidecar.outboundAddress();
    mesh.service("web");
    backend = mesh.backend("a");
    mesh.endpoints("web", backend);
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
  }

  /** Writes raw bytes on a fresh connection and reads one response. */
  private static RawHttp.Response raw(InetSocketAddress to, String bytes, Socket[] keep) throws IOException {
    Socket s = new Socket(to.getAddress(), to.getPort());
    keep[0] = s;
    s.setSoTimeout(10_000);
    s.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
    s.getOutputStream().flush();
    return RawHttp.read(s.getInputStream());
  }

  /** True once the peer closed: read returns end of stream (bounded by the socket timeout). */
  private static boolean closedByPeer(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    try {
      return in.read() == -1;
    } catch (java.net.SocketException e) {
      return true; // reset also means closed
    }
  }

  private void assertStillServing() throws IOException {
    RawHttp.Response ok = RawHttp.send(proxy, "GET", WEB, "/after");
    assertThat(ok.status()).isEqualTo(200);
    assertThat(ok.text()).isEqualTo("hello from /after");
  }

  @Test
  void malformedRequestLineIs400AndTheConnectionIsClosed() throws Exception {
    Socket[] s = new Socket[1];
    try {
      RawHttp.Response r = raw(proxy, "THIS IS NOT HTTP\r\nHost: " + WEB + "\r\n\r\n", s);

      assertThat(r.status()).isEqualTo(400);
      assertThat(r.text()).startsWith("bad request");
      assertThat(r.header("connection")).isEqualToIgnoringCase("close");
      assertThat(closedByPeer(s[0])).isTrue();
    } finally {
      s[0].close();
    }
    assertThat(backend.hits).hasValue(0);
    assertStillServing();
  }

  @Test
  void garbageVersionIs400AndTheConnectionIsClosed() throws Exception {
    Socket[] s = new Socket[1];
    try {
      RawHttp.Response r = raw(proxy, "GET / HTTP/9.Z\r\nHost: " + WEB + "\r\n\r\n", s);

      assertThat(r.status()).isEqualTo(400);
      assertThat(closedByPeer(s[0])).isTrue();
    } finally {
      s[0].close();
    }
    assertStillServing();
  }

  @Test
  void oversizedRequestHeadersAre431AndTheConnectionIsClosed() throws Exception {
    Socket[] s = new Socket[1];
    try {
      String big = "X-Big: " + "a".repeat(64 * 1024) + "\r\n";
      RawHttp.Response r = raw(proxy, "GET / HTTP/1.1\r\nHost: " + WEB + "\r\n" + big + "\r\n", s);

      assertThat(r.status()).isEqualTo(431);
      assertThat(r.header("connection")).isEqualToIgnoringCase("close");
      assertThat(closedByPeer(s[0])).isTrue();
    } finally {
      s[0].close();
    }
    assertThat(backend.hits).hasValue(0);
    assertStillServing();
  }

  @Test
  void oversizedRequestLineIs414() throws Exception {
    Socket[] s = new Socket[1];
    try {
      RawHttp.Response r = raw(proxy, "GET /" + "p".repeat(64 * 1024) + " HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n", s);

      assertThat(r.status()).isEqualTo(414);
      assertThat(closedByPeer(s[0])).isTrue();
    } finally {
      s[0].close();
    }
    assertStillServing();
  }

  @Test
  void unknownAuthorityFailsWithinTheFailFastTimeoutInsteadOfHanging() throws Exception {
    String unknown = authority("nosuch");
    CompletableFuture<RawHttp.Response> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return RawHttp.send(proxy, "GET", unknown, "/");
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });

    // Either answered at once, or parked on the fail-fast timer (3 s): advancing it must answer.
    await().atMost(10, TimeUnit.SECONDS).until(() -> {
      if (waiting.isDone()) {
        return true;
      }
      Duration next = clock.nextDeadline();
      if (next != null && next.compareTo(Duration.ofSeconds(3)) <= 0) {
        clock.advance(Duration.ofSeconds(3));
      }
      return waiting.isDone();
    });

    RawHttp.Response r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isBetween(400, 599);
    assertThat(r.text()).isNotBlank();
    assertThat(backend.hits).hasValue(0);
    assertStillServing();
  }

  @Test
  void garbageAuthoritiesAre400AtOnceWithoutWaitingForTheClock() throws Exception {
    int timers = clock.pendingTasks();
    for (String host : new String[] {"::::", "web:notaport", "web:0", "web:70000", "we b:80", ":8080"}) {
      RawHttp.Response r = RawHttp.send(proxy, "GET", host, "/");

      assertThat(r.status()).as(host).isEqualTo(400);
      assertThat(r.text()).as(host).isEqualTo("invalid Host header or :authority: " + host);
    }
    assertThat(clock.pendingTasks()).as("nothing parked on the fail-fast timer").isEqualTo(timers);
    assertThat(backend.hits).hasValue(0);
    assertStillServing();
  }

  @Test
  void hostIsValidatedAgainWhenItChangesOnAKeepAliveConnection() throws Exception {
    // The sidecar parses a connection's Host once and reuses it while it stays the same.
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      RawHttp.Response first = request(s, WEB, "/one");
      RawHttp.Response bad = request(s, "bad host!", "/two");
      RawHttp.Response again = request(s, WEB, "/three");

      assertThat(first.status()).isEqualTo(200);
      assertThat(first.text()).isEqualTo("hello from /one");
      assertThat(bad.status()).isEqualTo(400);
      assertThat(bad.text()).isEqualTo("invalid Host header or :authority: bad host!");
      assertThat(again.status()).isEqualTo(200);
      assertThat(again.text()).isEqualTo("hello from /three");
      assertThat(backend.hits).hasValue(2);
    }
  }

  private static RawHttp.Response request(Socket s, String host, String path) throws IOException {
    s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
        .getBytes(StandardCharsets.ISO_8859_1));
    s.getOutputStream().flush();
    return RawHttp.read(s.getInputStream());
  }
}
