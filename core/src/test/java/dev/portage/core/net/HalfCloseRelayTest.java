package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The half-close a relay must survive, on every transport a component with relays may take: the
 * client finishes sending, and the backend then answers with more than the socket buffers hold, so
 * writes toward the client wait for it to read. Every byte arrives (epoll loses some: {@link
 * EpollHalfCloseDefectTest}).
 */
class HalfCloseRelayTest {

  @ParameterizedTest
  @EnumSource(value = NettyTransport.class, names = {"NIO", "IO_URING"})
  void everyByteWrittenTowardAHalfClosedClientArrives(NettyTransport transport) throws Exception {
    assumeTrue(transport.isAvailable(), transport + " unavailable");
    int total = 8 << 20;
    assertThat(TestRelayProxy.bytesAfterClientHalfClose(transport, total)).isEqualTo(total);
  }
}
