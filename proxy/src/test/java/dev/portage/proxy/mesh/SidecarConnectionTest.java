package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How the sidecar holds its client and upstream connections: socket options, reuse, loop count. */
class SidecarConnectionTest {

  private static final String WEB = MeshFixture.authority("web");

  private final FakeClock clock = new FakeClock();
  private MeshFixture mesh;
  private InetSocketAddress proxy;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    proxy = mesh.sidecar.outboundAddress();
    mesh.service("web");
    mesh.endpoints("web", mesh.backend("a"));
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
  }

  @Test
  void clientConnectionsHaveNagleOff() throws Exception {
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      assertThat(send(s, "/x").status()).isEqualTo(200);
      // Nagle + delayed ACK would hold a small response back for up to ~40 ms.
      assertThat(mesh.sidecar.inboundChannels().size()).isEqualTo(1);
      for (Channel ch : mesh.sidecar.inboundChannels()) {
        assertThat(ch.config().getOption(ChannelOption.TCP_NODELAY)).isTrue();
      }
    }
  }

  @Test
  void pipelinedRequestsAreHeldAndAnsweredInOrder() throws Exception {
    // The sidecar reads on while a request is in flight; requests that arrive early wait their turn.
    String host = MeshFixture.authority("web");
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      StringBuilder three = new StringBuilder();
      for (String path : new String[] {"/p1", "/p2", "/p3"}) {
        three.append("GET ").append(path).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n\r\n");
      }
      s.getOutputStream().write(three.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      for (String path : new String[] {"/p1", "/p2", "/p3"}) {
        RawHttp.Response r = RawHttp.read(s.getInputStream());
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).isEqualTo("hello from " + path);
      }
      // And the connection goes on as a plain keep-alive one.
      assertThat(send(s, "/after").text()).isEqualTo("hello from /after");
    }
  }

  @Test
  void keepAliveClientIsServedOverOneUpstreamConnection() throws Exception {
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      for (int i = 0; i < 50; i++) {
        RawHttp.Response r = send(s, "/k" + i);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).isEqualTo("hello from /k" + i);
      }
    }
    // Each response is done (and its upstream connection back in the pool) before the next
    // request is read: one upstream connection carries all of them.
    assertThat(mesh.sidecar.pool().openConnections()).isEqualTo(1);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.inboundConnections() == 0);
    assertThat(mesh.sidecar.pool().idleConnections()).isEqualTo(1);
  }

  @Test
  void sequentialClientsReuseUpstreamConnectionsInsteadOfOpeningOnePerClient() throws Exception {
    for (int i = 0; i < 40; i++) {
      try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
        s.setSoTimeout(10_000);
        assertThat(send(s, "/c" + i).status()).isEqualTo(200);
      }
    }
    // Client connections land on different event loops; each loop keeps its own upstream one.
    assertThat(mesh.sidecar.pool().openConnections()).isBetween(1, Sidecar.ioThreads(0));
  }

  @Test
  void oneEventLoopPerCoreByDefaultOrTheConfiguredCount() {
    if (System.getProperty("io.netty.eventLoopThreads") == null) {
      assertThat(Sidecar.ioThreads(0)).isEqualTo(Runtime.getRuntime().availableProcessors());
    } else {
      assertThat(Sidecar.ioThreads(0)).isEqualTo(Integer.getInteger("io.netty.eventLoopThreads"));
    }
    assertThat(Sidecar.ioThreads(3)).isEqualTo(3);
  }

  private static RawHttp.Response send(Socket s, String path) throws Exception {
    OutputStream out = s.getOutputStream();
    out.write(("GET " + path + " HTTP/1.1\r\nHost: " + WEB + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
    InputStream in = s.getInputStream();
    return RawHttp.read(in);
  }
}
