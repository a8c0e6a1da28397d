package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Tunnels live on their agent stream's event loop: the agent listener runs on the server's loops,
 * each stream records its loop, and HTTP CONNECT sockets are registered on it (draining and gone
 * streams are not preferred).
 */
class AgentAffinityIntegrationTest {
  private static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  private Socket tunnel(TestStream agent, long connectID) throws IOException {
    InetSocketAddress a = (InetSocketAddress) fx.server.frontendAddress();
    Socket s = new Socket("127.0.0.1", a.getPort());
    s.setSoTimeout(10_000);
    s.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    Packet req = agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), connectID));
    InputStream in = s.getInputStream();
    assertThat(new String(in.readNBytes(ESTABLISHED.length()), StandardCharsets.ISO_8859_1)).isEqualTo(ESTABLISHED);
    return s;
  }

  private Backend backend(String agentId) {
    return fx.server.router().backends().all().stream().filter(b -> b.agentId().equals(agentId)).findFirst().orElseThrow();
  }

  @Test
  void anHttpConnectTunnelRunsOnItsAgentStreamsEventLoop() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT));
    TestStream agent = fx.agent("agent-a", null);
    Backend backend = backend("agent-a");
    assertThat(backend.eventLoop()).as("agent listener runs on the server's loops").isNotNull();
    assertThat(fx.server.router().backends().preferredLoop()).isSameAs(backend.eventLoop());

    try (Socket s = tunnel(agent, 7)) {
      HttpConnectFrontend frontend = (HttpConnectFrontend) backend.connections().get(7L);
      assertThat(frontend.channel().eventLoop()).isSameAs(backend.eventLoop());
      s.getOutputStream().write("ping".getBytes(StandardCharsets.US_ASCII));
      assertThat(agent.nextPacket(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("ping");
      agent.send(Packets.data(7, "pong".getBytes(StandardCharsets.US_ASCII)));
      assertThat(new String(s.getInputStream().readNBytes(4), StandardCharsets.US_ASCII)).isEqualTo("pong");
    }
  }

  @Test
  void drainingOrDisconnectedAgentsAreNotPreferredAndTunnelsStillWork() throws Exception {
    fx = new ServerFixture(b -> b.mode(FrontendMode.HTTP_CONNECT));
    TestStream agent = fx.agent("agent-a", null);
    agent.send(Packets.drain());
    await().atMost(Duration.ofSeconds(10)).until(() -> backend("agent-a").draining());
    assertThat(fx.server.router().backends().preferredLoop()).as("only a draining agent").isNull();
    try (Socket s = tunnel(agent, 1)) {
      s.getOutputStream().write('x');
      assertThat(agent.nextPacket(PacketType.DATA).getData().getData().toStringUtf8()).isEqualTo("x");
    }

    TestStream other = fx.agent("agent-b", null);
    assertThat(fx.server.router().backends().preferredLoop()).isSameAs(backend("agent-b").eventLoop());
    other.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.server.router().backends().all().size() == 1);
    assertThat(fx.server.router().backends().preferredLoop()).isNull();
  }
}
