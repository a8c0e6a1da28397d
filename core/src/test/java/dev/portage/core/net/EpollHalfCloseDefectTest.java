package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.Epoll;
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
    assertThat(TestRelayProxy.bytesAfterClientHalfClose(NettyTransport.EPOLL, total)).isLessThan(total);
  }
}
