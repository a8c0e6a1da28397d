package dev.portage.core.net;

import static dev.portage.core.net.TestRelayProxy.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.Channel;
import io.netty.channel.epoll.Epoll;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Pins the Netty 4.2.18 epoll defect that makes NIO the default in {@link NettyTransport#best()}:
 * after a socket's input is shut down, epoll drops it from the epoll set but still believes it is
 * registered, so the first write that must wait for {@code EPOLLOUT} fails and the relay closes
 * with data undelivered. When this test fails after a Netty upgrade, the defect is fixed: make
 * epoll the default again and delete this test.
 */
class EpollHalfCloseDefectTest {

  @Test
  void epollLosesDataWrittenToAHalfClosedSocketThatMustWait() throws Exception {
    assumeTrue(Epoll.isAvailable(), "epoll unavailable");
    int total = 8 << 20;
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try (TestRelayProxy proxy = new TestRelayProxy(NettyTransport.EPOLL);
        Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.shutdownOutput();
      assertThat(server.getInputStream().read()).isEqualTo(-1);
      threads.execute(
          () -> {
            try {
              OutputStream out = server.getOutputStream();
              out.write(new byte[total]);
            } catch (IOException expected) {
              // The proxy resets the connection once the defect strikes.
            }
          });
      Channel inbound = proxy.lastInbound.get();
      // The client reads nothing yet, so writes toward it must wait for EPOLLOUT.
      await().atMost(TIMEOUT).until(() -> !inbound.isWritable() || !inbound.isActive());

      long got = 0;
      try {
        got = client.getInputStream().readAllBytes().length;
      } catch (IOException reset) {
        // Also the defect: the proxy gave up on the client.
      }
      assertThat(got).isLessThan(total);
    } finally {
      threads.shutdownNow();
      assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
