package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReceiveBudgetTest {

  @Test
  void alwaysAdmitsMinPacketsThenBoundsBytesAndStaysOverflowed() {
    ReceiveBudget b = new ReceiveBudget(100, 2);
    assertThat(b.tryReserve(1000)).isTrue(); // within the packet floor
    assertThat(b.tryReserve(1000)).isTrue();
    assertThat(b.tryReserve(1)).isFalse(); // over both bounds
    assertThat(b.overflowed()).isTrue();
    b.release(1000);
    b.release(1000);
    assertThat(b.tryReserve(1)).isFalse(); // overflow is final: the connection is being closed
    assertThat(b.queuedBytes()).isZero();
  }

  @Test
  void releasedBytesMakeRoomAgain() {
    ReceiveBudget b = new ReceiveBudget(100, 1);
    assertThat(b.tryReserve(60)).isTrue();
    b.release(60);
    assertThat(b.tryReserve(60)).isTrue();
    assertThat(b.tryReserve(30)).isTrue();
    assertThat(b.queuedBytes()).isEqualTo(90);
    assertThat(b.overflowed()).isFalse();
  }
}
