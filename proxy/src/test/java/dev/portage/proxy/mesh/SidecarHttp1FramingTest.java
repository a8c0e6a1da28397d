package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Strict HTTP/1.1 framing on the sidecar's outbound listener (RFC 9112), over real sockets, with a
 * raw backend that records each complete request it received: pipelined requests after a body are
 * answered, a body with bad chunked framing is refused and never reaches the backend whole, and
 * requests whose target or Host are ambiguous are refused.
 */
class SidecarHttp1FramingTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  final AtomicInteger served = new AtomicInteger();
  MeshFixture mesh;
  InetSocketAddress proxy;
  ScriptedBackend backend;
  Socket client;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    proxy = mesh.sidecar.outboundAddress();
    backend = new ScriptedBackend(() -> {
      String body = "answer " + served.incrementAndGet();
      return "HTTP/1.1 200 OK\r\ncontent-length: " + body.length() + "\r\n\r\n" + body;
    });
    mesh.service("web");
    mesh.endpoint("web", "raw", backend.port());
    await().atMost(10, TimeUnit.SECONDS).until(() -> RawHttp.send(proxy, "GET", WEB, "/ready").status() == 200);
    backend.requests.clear();
    backend.connections.set(0);
    backend.heads.set(0);
    served.set(0);
    client = new Socket(proxy.getAddress(), proxy.getPort());
    client.setSoTimeout(10_000);
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    mesh.close();
    backend.close();
  }

  private void write(String bytes) throws IOException {
    OutputStream out = client.getOutputStream();
    out.write(bytes.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  private RawHttp.Response read() throws IOException {
    return RawHttp.read(client.getInputStream());
  }

  private boolean closedByPeer() throws IOException {
    InputStream in = client.getInputStream();
    try {
      return in.read() == -1;
    } catch (java.net.SocketException e) {
      return true;
    }
  }

  private static String post(String path, String body) {
    return "POST " + path + " HTTP/1.1\r\nHost: " + WEB + "\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
  }

  private static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n";
  }

  private static final String CHUNKED_HEAD =
      "POST /upload HTTP/1.1\r\nHost: " + WEB + "\r\nTransfer-Encoding: chunked\r\n\r\n";

  @Test
  void aRequestPipelinedInTheSameWriteAsTheBodyBeforeItIsAnswered() throws Exception {
    write(post("/one", "hello") + get("/two") + post("/three", "x"));

    assertThat(read().text()).isEqualTo("answer 1");
    assertThat(read().text()).isEqualTo("answer 2");
    assertThat(read().text()).isEqualTo("answer 3");
    assertThat(backend.requests).hasSize(3);
    assertThat(backend.requests.get(0)).startsWith("POST /one ").endsWith("\r\n\r\nhello");
    assertThat(backend.requests.get(1)).startsWith("GET /two ");
    assertThat(backend.requests.get(2)).startsWith("POST /three ").endsWith("\r\n\r\nx");
  }

  @Test
  void aBodyAndTheNextRequestHeadInOneWriteAreBothAnswered() throws Exception {
    write("POST /one HTTP/1.1\r\nHost: " + WEB + "\r\nContent-Length: 5\r\n\r\n");
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.inflightRequests() == 1);
    write("hello" + get("/two"));

    assertThat(read().text()).isEqualTo("answer 1");
    assertThat(read().text()).isEqualTo("answer 2");
    assertThat(backend.requests).hasSize(2);
    assertThat(backend.requests.get(0)).endsWith("\r\n\r\nhello");
  }

  @Test
  void aChunkedBodyFollowedByAPipelinedRequestInOneWrite() throws Exception {
    write(CHUNKED_HEAD + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" + get("/after"));

    assertThat(read().text()).isEqualTo("answer 1");
    assertThat(read().text()).isEqualTo("answer 2");
    assertThat(backend.requests.get(0)).endsWith("\r\n\r\nhello world");
    assertThat(backend.requests.get(1)).startsWith("GET /after ");
  }

  @Test
  void anInvalidChunkSizeIs400AndNothingReachesTheBackend() throws Exception {
    write(CHUNKED_HEAD + "zz\r\nabc\r\n0\r\n\r\n" + get("/smuggled"));

    RawHttp.Response r = read();
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.text()).startsWith("bad request: ");
    assertThat(r.header("connection")).isEqualToIgnoringCase("close");
    assertThat(closedByPeer()).isTrue();
    assertThat(backend.heads).as("request heads the backend read").hasValue(0);
    assertThat(backend.requests).isEmpty();
  }

  @Test
  void chunkDataNotEndedByCrlfIs400AndNothingReachesTheBackend() throws Exception {
    write(CHUNKED_HEAD + "3\r\nabcXY\r\n0\r\n\r\n");

    assertThat(read().status()).isEqualTo(400);
    assertThat(closedByPeer()).isTrue();
    assertThat(backend.heads).as("request heads the backend read").hasValue(0);
  }

  @Test
  void badFramingAfterTheRequestWentOutAbortsItSoTheBackendNeverSeesItWhole() throws Exception {
    write(CHUNKED_HEAD + "3\r\nabc\r\n");
    await().atMost(10, TimeUnit.SECONDS).until(() -> backend.heads.get() == 1);
    write("-1\r\n");

    RawHttp.Response r = read();
    assertThat(r.status()).isEqualTo(400);
    assertThat(closedByPeer()).isTrue();
    assertThat(backend.heads).hasValue(1);
    assertThat(backend.requests).as("the backend's read of the body ended at a closed connection").isEmpty();
    assertThat(served).hasValue(0);
  }

  @Test
  void aSecondHostHeaderIs400() throws Exception {
    write("GET / HTTP/1.1\r\nHost: " + WEB + "\r\nHost: other.default.svc.cluster.local:8080\r\n\r\n");
    RawHttp.Response r = read();
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.text()).isEqualTo("more than one Host header");

    // Even when both say the same (RFC 9112: a request with more than one Host is invalid).
    write("GET / HTTP/1.1\r\nHost: " + WEB + "\r\nHost: " + WEB + "\r\n\r\n");
    assertThat(read().status()).isEqualTo(400);
    assertThat(backend.heads).as("request heads the backend read").hasValue(0);
  }

  @Test
  void anAbsoluteFormTargetNamingAnotherAuthorityThanHostIs400() throws Exception {
    write("GET http://other.default.svc.cluster.local:8080/x HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n");
    RawHttp.Response r = read();
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.text()).isEqualTo(
        "request target authority other.default.svc.cluster.local:8080 does not match Host " + WEB);
    assertThat(backend.heads).as("request heads the backend read").hasValue(0);
  }

  @Test
  void anAbsoluteFormTargetNamingTheHostIsSentOnInOriginForm() throws Exception {
    write("GET HTTP://" + WEB.toUpperCase() + "/x?y=1 HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n");
    assertThat(read().text()).isEqualTo("answer 1");
    assertThat(backend.requests.get(0)).startsWith("GET /x?y=1 HTTP/1.1\r\n");
  }

  /** Reads from the client until {@code end} has arrived, and returns everything read. */
  private String readUntil(String end) throws IOException {
    InputStream in = client.getInputStream();
    StringBuilder got = new StringBuilder();
    while (!got.toString().endsWith(end)) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed after " + got);
      }
      got.append((char) b);
    }
    return got.toString();
  }

  @Test
  void answersReadWholeFromTheEndpointReachTheClientFramedAsTheyCame() throws Exception {
    // A fixed-length answer, an empty one, a chunked one with only trailers, and one with a body
    // and trailers, on one keep-alive connection: each framed as the endpoint framed it.
    String[] answers = {
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
      "HTTP/1.1 204 No Content\r\n\r\n",
      ScriptedBackend.chunkedWithTrailers("", "grpc-status: 14"),
      ScriptedBackend.chunkedWithTrailers("data", "grpc-status: 0", "grpc-message: fine"),
      "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok",
    };
    AtomicInteger next = new AtomicInteger();
    backend.response = () -> answers[next.getAndIncrement()];

    write(get("/fixed"));
    assertThat(readUntil("\r\n\r\nhello")).startsWith("HTTP/1.1 200 OK\r\n").contains("content-length: 5\r\n");
    write(get("/empty"));
    String empty = readUntil("\r\n\r\n");
    assertThat(empty).startsWith("HTTP/1.1 204 No Content\r\n").doesNotContain("content-length", "chunked");
    write(get("/trailers-only"));
    assertThat(readUntil("\r\n0\r\ngrpc-status: 14\r\n\r\n")).contains("transfer-encoding: chunked\r\n");
    write(get("/trailers"));
    assertThat(readUntil("grpc-message: fine\r\n\r\n"))
        .endsWith("\r\n\r\n4\r\ndata\r\n0\r\ngrpc-status: 0\r\ngrpc-message: fine\r\n\r\n");
    // Nothing stray between the answers: the next one starts where the last ended.
    write(get("/after"));
    assertThat(read().text()).isEqualTo("ok");
    assertThat(backend.connections).hasValue(1);
  }
}
