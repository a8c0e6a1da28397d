package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.time.FakeClock;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that open connections and never finish their requests: every HTTP listener of the server
 * holds a bounded number of them for a bounded time, and tunnels keep working meanwhile.
 */
class ListenerLimitsIntegrationTest {
  private static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";
  private final FakeClock clock = new FakeClock();
  private final List<SocketChannel> held = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    for (SocketChannel c : held) {
      c.close();
    }
    for (Socket s : sockets) {
      s.close();
    }
    fx.close();
  }

  /** Opens {@code n} connections to {@code port}, each sending {@code partial} and nothing more. */
  private void holdPartialRequests(int port, int n, String partial) throws IOException {
    for (int i = 0; i < n; i++) {
      SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
      held.add(c);
      c.write(ByteBuffer.wrap(partial.getBytes(StandardCharsets.US_ASCII)));
      c.configureBlocking(false);
    }
  }

  /** How many of the held connections the server has closed (EOF or reset). */
  private long closedByServer() {
    long closed = 0;
    ByteBuffer sink = ByteBuffer.allocate(1024);
    for (SocketChannel c : held) {
      try {
        sink.clear();
        if (c.read(sink) < 0) {
          closed++;
        }
      } catch (IOException reset) {
        closed++;
      }
    }
    return closed;
  }

  private Socket connect(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(10_000);
    sockets.add(s);
    return s;
  }

  /** CONNECT through the frontend, answered by {@code agent}; the socket is then a tunnel. */
  private Socket tunnel(TestStream agent, long connectID) throws IOException {
    Socket s = connect(((InetSocketAddress) fx.server.frontendAddress()).getPort());
    s.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    assertThat(new String(s.getInputStream().readNBytes(ESTABLISHED.length()), StandardCharsets.US_ASCII))
        .isEqualTo(ESTABLISHED);
    return s;
  }

  @Test
  void partialRequestsHeldOnTheHealthPortNeitherExhaustItNorBreakConnect() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT), clock.timeSource());
    TestStream agent = fx.agent("agent-a", null);
    int health = fx.server.healthAddress().getPort();

    holdPartialRequests(health, 300, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    // The health listener holds at most 100; the others are closed at accept.
    await().atMost(Duration.ofSeconds(10)).until(() -> closedByServer() == 200);

    Socket tunnel = tunnel(agent, 7);
    agent.send(Packets.data(7, "through".getBytes(StandardCharsets.US_ASCII)));
    assertThat(new String(tunnel.getInputStream().readNBytes(7), StandardCharsets.US_ASCII)).isEqualTo("through");

    // None of them finishes a request within the read timeout: all are closed, and health answers again.
    clock.advance(Duration.ofSeconds(10));
    await().atMost(Duration.ofSeconds(10)).until(() -> closedByServer() == 300);
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + health + "/healthz"))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
    }
  }

  @Test
  void connectionsStillSendingTheirConnectHeadAreCappedAndTimedOut() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT).maxPendingHeads(5)
        .headerReadTimeout(Duration.ofSeconds(60)), clock.timeSource());
    TestStream agent = fx.agent("agent-a", null);
    Socket established = tunnel(agent, 1); // a tunnel does not count toward the cap
    int frontend = ((InetSocketAddress) fx.server.frontendAddress()).getPort();

    holdPartialRequests(frontend, 5, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n");
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_http_connections") == 6);
    holdPartialRequests(frontend, 1, "CONNECT 10.0.0.5:443 HTTP/1.1\r\n");
    await().atMost(Duration.ofSeconds(10)).until(() -> closedByServer() == 1); // the sixth
    assertThat(held.get(5).isConnected()).isTrue();

    agent.send(Packets.data(1, "still".getBytes(StandardCharsets.US_ASCII)));
    assertThat(new String(established.getInputStream().readNBytes(5), StandardCharsets.US_ASCII)).isEqualTo("still");

    clock.advance(Duration.ofSeconds(60));
    await().atMost(Duration.ofSeconds(10)).until(() -> closedByServer() == 6);
    tunnel(agent, 2); // room again
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_http_connections") == 2);
  }
}
