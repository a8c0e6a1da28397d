package dev.portage.tunnel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.server.FrontendMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * After 1,000 tunnels opened, used and closed through a real server and agent, nothing is left: no
 * frontend, pending dial or established connection on the server, no backend socket or dial on the
 * agent.
 */
class LeakEndToEndTest {
  private static final int TUNNELS = 1000;
  private static final int WORKERS = 8;
  private TunnelFixture fx;
  private TcpBackend echo;

  @AfterEach
  void tearDown() throws Exception {
    if (echo != null) {
      echo.close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  private TunnelAgent start(FrontendMode mode) throws Exception {
    fx = TunnelFixture.start(mode);
    echo = TcpBackend.echo();
    return fx.agent("agent-a");
  }

  /** Runs {@code tunnel} {@value #TUNNELS} times over {@value #WORKERS} threads. */
  private static void runAll(TunnelBody tunnel) throws Exception {
    try (ExecutorService pool = Executors.newFixedThreadPool(WORKERS)) {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < WORKERS; w++) {
        int worker = w;
        done.add(pool.submit(() -> {
          for (int i = worker; i < TUNNELS; i += WORKERS) {
            tunnel.run(i);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    }
  }

  private interface TunnelBody {
    void run(int i) throws Exception;
  }

  @Test
  void thousandGrpcTunnelsLeaveNoStateBehind() throws Exception {
    TunnelAgent agent = start(FrontendMode.GRPC);
    runAll(i -> {
      byte[] sent = TcpBackend.payload(i, 512);
      try (GrpcTunnel t = GrpcTunnel.open(fx.frontendChannel())) {
        t.connect(echo.address());
        t.write(sent);
        assertThat(Arrays.equals(t.read(sent.length), sent)).isTrue();
        // Alternate who ends it: the client's CLOSE_REQ, or the client stream going away.
        if (i % 2 == 0) {
          t.closeRequest();
          t.awaitClose();
        } else {
          t.cancel();
        }
      }
    });

    fx.awaitNoTunnelState();
    assertThat(echo.acceptedCount()).isEqualTo(TUNNELS);
    assertThat(agent.openEndpointConnections()).isZero();
  }

  @Test
  void thousandHttpConnectTunnelsLeaveNoStateBehind() throws Exception {
    TunnelAgent agent = start(FrontendMode.HTTP_CONNECT);
    runAll(i -> {
      byte[] sent = TcpBackend.payload(i, 512);
      try (ConnectClient c = ConnectClient.tunnel(fx.proxyPort(), echo.address())) {
        c.write(sent);
        assertThat(Arrays.equals(c.read(sent.length), sent)).isTrue();
        // Alternate a half-close (EOF to the agent) and an abrupt close of the client socket.
        if (i % 2 == 0) {
          c.socket.shutdownOutput();
          assertThat(c.readToEof()).isEmpty();
        }
      }
    });

    fx.awaitNoTunnelState();
    assertThat(echo.acceptedCount()).isEqualTo(TUNNELS);
    assertThat(agent.openEndpointConnections()).isZero();
  }
}
