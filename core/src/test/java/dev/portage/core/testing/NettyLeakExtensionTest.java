package dev.portage.core.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class NettyLeakExtensionTest {

  @Test
  void aLeakedBufferIsReported() {
    ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    try {
      NettyLeakExtension.collectLeaks(); // start clean
      leakOne();
      List<String> seen = new ArrayList<>();
      // Collection and the reference queue are asynchronous: poll until Netty reports it.
      Awaitility.await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> seen.addAll(NettyLeakExtension.collectLeaks()) || !seen.isEmpty());
      assertThat(seen).first().asString().startsWith("LEAK:");
    } finally {
      ResourceLeakDetector.setLevel(before);
    }
  }

  private static void leakOne() {
    ByteBuf leaked = new UnpooledByteBufAllocator(false).directBuffer(8);
    leaked.writeByte(1); // never released, on purpose
  }
}
