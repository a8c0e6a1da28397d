package dev.portage.core.net;

import static dev.portage.core.net.TestRelayProxy.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.Channel;
import io.netty.channel.uring.IoUring;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The half-close a relay must survive, on every transport {@link NettyTransport#best()} may pick:
 * the client finishes sending, and the backend then answers with more than the socket buffers hold,
 * so writes toward the client wait for it to read. Every byte arrives (epoll fails this: {@link
 * EpollHalfCloseDefectTest}).
 */
class HalfCloseRelayTest {

  @ParameterizedTest
  @EnumSource(value = NettyTransport.class, names = {"NIO", "IO_URING"})
  void everyByteWrittenTowardAHalfClosedClientArrives(NettyTransport transport) throws Exception {
    assumeTrue(transport != NettyTransport.IO_URING || IoUring.isAvailable(), "io_uring unavailable");
    int total = 8 << 20;
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try (TestRelayProxy proxy = new TestRelayProxy(transport);
        Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.shutdownOutput();
      assertThat(server.getInputStream().read()).isEqualTo(-1);
      threads.execute(
          () -> {
            try (OutputStream out = server.getOutputStream()) {
              out.write(new byte[total]);
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          });
      Channel inbound = proxy.lastInbound.get();
      // The client reads nothing yet, so writes toward it must wait for the socket to drain.
      await().atMost(TIMEOUT).until(() -> !inbound.isWritable() || !inbound.isActive());

      assertThat(client.getInputStream().readAllBytes()).hasSize(total);
    } finally {
      threads.shutdownNow();
      assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
