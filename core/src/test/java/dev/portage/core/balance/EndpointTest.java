package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class EndpointTest {

  @Test
  void startsHealthyIdleWithWeightOne() {
    InetSocketAddress address = InetSocketAddress.createUnresolved("10.0.0.1", 443);
    Endpoint<InetSocketAddress> e = Endpoint.of("pod-1", address);
    assertThat(e.id()).isEqualTo("pod-1");
    assertThat(e.target()).isSameAs(address);
    assertThat(e.weight()).isEqualTo(1);
    assertThat(e.isHealthy()).isTrue();
    assertThat(e.inFlight()).isZero();
    e.setHealthy(false);
    assertThat(e.isHealthy()).isFalse();
    assertThat(e.toString()).contains("id=pod-1", "healthy=false");
  }

  @Test
  void rejectsBadArguments() {
    assertThatThrownBy(() -> Endpoint.of("a", "t", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("weight: 0 (expected: >= 1)");
    assertThatThrownBy(() -> Endpoint.of("", "t"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id: \"\" (expected: non-empty)");
    assertThatThrownBy(() -> Endpoint.of(null, "t"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("id");
    assertThatThrownBy(() -> Endpoint.of("a", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("target");
  }
}
