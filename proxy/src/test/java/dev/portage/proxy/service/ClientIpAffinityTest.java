package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.FakeClock;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClientIpAffinityTest {

  private final FakeClock clock = new FakeClock();
  private final ClientIpAffinity affinity = new ClientIpAffinity(Duration.ofSeconds(10), clock);
  private final InetAddress one = InetAddress.getLoopbackAddress();

  @Test
  void entryLivesForTheTimeoutFromItsLastUse() {
    affinity.record(one, "a");
    clock.advance(Duration.ofSeconds(9));
    assertThat(affinity.lookup(one)).isEqualTo("a");
    affinity.record(one, "a"); // used again: the time to live restarts
    clock.advance(Duration.ofSeconds(9));
    assertThat(affinity.lookup(one)).isEqualTo("a");
    clock.advance(Duration.ofSeconds(1));
    assertThat(affinity.lookup(one)).isNull();
    assertThat(affinity.size()).isZero();
  }

  @Test
  void expireDropsOnlyExpiredEntries() throws Exception {
    InetAddress two = InetAddress.getByName("127.0.0.2");
    affinity.record(one, "a");
    clock.advance(Duration.ofSeconds(5));
    affinity.record(two, "b");
    clock.advance(Duration.ofSeconds(5));

    assertThat(affinity.expire()).isEqualTo(1);
    assertThat(affinity.lookup(two)).isEqualTo("b");
  }

  @Test
  void retainDropsEntriesOfRemovedEndpoints() throws Exception {
    InetAddress two = InetAddress.getByName("127.0.0.2");
    affinity.record(one, "a");
    affinity.record(two, "b");

    affinity.retain(Set.of("b"));

    assertThat(affinity.lookup(one)).isNull();
    assertThat(affinity.lookup(two)).isEqualTo("b");
  }
}
