package dev.portage.tunnel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ScratchPayloadTest {
  private static byte[] random(int n, int seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void wrapsTheReadableBytesWithoutConsumingThem() {
    byte[] bytes = random(1000, 1);
    ByteBuf buf = Unpooled.directBuffer(2000).writeBytes(bytes);
    try {
      buf.readerIndex(10);
      ByteString payload = ScratchPayload.wrap(buf);
      assertThat(payload.toByteArray()).isEqualTo(java.util.Arrays.copyOfRange(bytes, 10, 1000));
      assertThat(buf.readerIndex()).isEqualTo(10);
      assertThat(buf.refCnt()).isEqualTo(1);
    } finally {
      buf.release();
    }
  }

  @Test
  void theScratchIsReusedByTheNextWrapButOversizedReadsGetTheirOwnArray() {
    ByteBuf small = Unpooled.wrappedBuffer(random(100, 2));
    ByteBuf big = Unpooled.wrappedBuffer(random(ScratchPayload.SCRATCH_BYTES + 1, 3));
    ByteString first = ScratchPayload.wrap(small);
    ByteString own = ScratchPayload.wrap(big);
    byte[] ownCopy = own.toByteArray();
    ScratchPayload.wrap(Unpooled.wrappedBuffer(random(100, 4)));
    // The contract: a scratch payload is dead after the thread's next wrap; an oversized one is not.
    assertThat(first.toByteArray()).isEqualTo(random(100, 4));
    assertThat(own.toByteArray()).isEqualTo(ownCopy).isEqualTo(random(ScratchPayload.SCRATCH_BYTES + 1, 3));
  }
}
