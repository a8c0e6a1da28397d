package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ListenAddressTest {

  @Test
  void goFormsNeedAPort() {
    assertThat(ListenAddress.parse("--addr", null, "127.0.0.1", 8086)).isEqualTo(new ListenAddress("127.0.0.1", 8086));
    assertThat(ListenAddress.parse("--addr", ":8086", "x", 1)).isEqualTo(new ListenAddress("0.0.0.0", 8086));
    assertThat(ListenAddress.parse("--addr", "10.0.0.1:4140", "x", 1)).isEqualTo(new ListenAddress("10.0.0.1", 4140));
    assertThat(ListenAddress.parse("--addr", "[::1]:4191", "x", 1)).isEqualTo(new ListenAddress("::1", 4191));
    for (String bad : new String[] {"10.0.0.1", "::1:4191", "h:port", "h:65536", "h:-1", ""}) {
      assertThatThrownBy(() -> ListenAddress.parse("--addr", bad, "x", 1))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--addr: '" + bad + "'")
          .hasMessageContaining("expected: [HOST]:PORT");
    }
  }

  @Test
  void kubeProxyFormsTakeADefaultPortOrNothing() {
    assertThat(ListenAddress.parseOptionalPort("--healthz-bind-address", "", 10256)).isNull();
    assertThat(ListenAddress.parseOptionalPort("--healthz-bind-address", " 0.0.0.0:10256 ", 1))
        .isEqualTo(new ListenAddress("0.0.0.0", 10256));
    assertThat(ListenAddress.parseOptionalPort("--metrics-bind-address", "127.0.0.1", 10249))
        .isEqualTo(new ListenAddress("127.0.0.1", 10249));
    assertThat(ListenAddress.parseOptionalPort("--metrics-bind-address", ":10249", 1))
        .isEqualTo(new ListenAddress("0.0.0.0", 10249));
    assertThat(ListenAddress.parseOptionalPort("--metrics-bind-address", "[::1]", 10249))
        .isEqualTo(new ListenAddress("::1", 10249));
    assertThat(ListenAddress.parseOptionalPort("--metrics-bind-address", "[::]:9", 1))
        .isEqualTo(new ListenAddress("::", 9));
    assertThatThrownBy(() -> ListenAddress.parseOptionalPort("--metrics-bind-address", "h:x", 10249))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--metrics-bind-address: h:x (expected: host:port, e.g. 0.0.0.0:10249)");
  }
}
