package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ScratchBytesTest {

  @Test
  void oneArrayOfTheGivenSizePerThread() throws Exception {
    ScratchBytes scratch = new ScratchBytes(64);
    byte[] here = scratch.get();

    assertThat(here).hasSize(64);
    assertThat(scratch.get()).isSameAs(here); // reused on the same thread
    byte[] there = CompletableFuture.supplyAsync(scratch::get).get();
    assertThat(there).hasSize(64).isNotSameAs(here);
  }

  @Test
  void aSizeBelowOneIsRefused() {
    assertThatThrownBy(() -> new ScratchBytes(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0");
  }
}
