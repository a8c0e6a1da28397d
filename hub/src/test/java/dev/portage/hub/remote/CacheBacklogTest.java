package dev.portage.hub.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class CacheBacklogTest {

  @Test
  void refusesBodiesOnceTheBacklogIsFullAndTakesThemAgainWhenItDrains() {
    CacheBacklog backlog = new CacheBacklog(100);
    assertThat(backlog.tryReserve(60)).isTrue();
    assertThat(backlog.tryReserve(60)).isFalse();
    assertThat(backlog.refused()).isEqualTo(1);
    assertThat(backlog.pendingBytes()).isEqualTo(60);
    backlog.release(60);
    assertThat(backlog.tryReserve(60)).isTrue();
  }

  @Test
  void aSingleBodyLargerThanTheLimitMayStillWaitAlone() {
    CacheBacklog backlog = new CacheBacklog(100);
    assertThat(backlog.tryReserve(500)).isTrue();
    assertThat(backlog.tryReserve(1)).isFalse();
  }

  @Test
  void anAnswerIdenticalToTheLastStoredIsRecognisedUntilForgotten() {
    CacheBacklog backlog = new CacheBacklog(100);
    long a = fingerprint("{\"items\":[1]}");
    long b = fingerprint("{\"items\":[2]}");
    assertThat(a).isNotEqualTo(b);
    assertThat(backlog.isUnchanged("kubelet list /api/v1/pods {}", a)).isFalse();
    backlog.stored("kubelet list /api/v1/pods {}", a);
    assertThat(backlog.isUnchanged("kubelet list /api/v1/pods {}", a)).isTrue();
    assertThat(backlog.isUnchanged("kubelet list /api/v1/pods {}", b)).isFalse();
    assertThat(backlog.isUnchanged("kube-proxy list /api/v1/pods {}", a)).isFalse();
    backlog.forget("kubelet list /api/v1/pods {}", a);
    assertThat(backlog.isUnchanged("kubelet list /api/v1/pods {}", a)).isFalse();
  }

  @Test
  void rejectsANonPositiveLimit() {
    assertThatThrownBy(() -> new CacheBacklog(0))
        .hasMessage("maxBytes: 0 (expected: > 0)");
  }

  private static long fingerprint(String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    return CacheBacklog.fingerprint(crc.getValue(), bytes.length);
  }
}
