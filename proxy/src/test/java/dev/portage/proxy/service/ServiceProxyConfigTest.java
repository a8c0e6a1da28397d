package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServiceProxyConfigTest {

  private static final Path FILE = Path.of("endpoints.yaml");

  @Test
  void defaultsAreKubeProxys() {
    ServiceProxyConfig config = ServiceProxyConfig.builder().endpointsFile(FILE).build();
    assertThat(config.minSyncPeriod()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.syncPeriod()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.syncBurst()).isEqualTo(2);
    assertThat(config.adminPort()).isEqualTo(10249);
    assertThat(config.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(config.dialTimeouts()).containsExactly(
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(config.closeRemovedEndpointConnections()).isFalse();
    assertThat(config.maxReadSize()).isEqualTo(1 << 20);
  }

  @Test
  void exactlyOneSourceIsRequired() {
    assertThatThrownBy(() -> ServiceProxyConfig.builder().build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("endpoint source: none given");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).kubernetes(true).build())
        .hasMessageStartingWith("endpoint source: several given");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().destinationAddr("127.0.0.1:8086").build())
        .hasMessage("destinationAddr: 127.0.0.1:8086 (expected: with an endpoints file listing authorities)");
    assertThat(ServiceProxyConfig.builder().kubeconfig(Path.of("kc")).build().kubernetes()).isTrue();
    assertThat(ServiceProxyConfig.builder().endpointsFile(FILE).destinationAddr("h:1").build().destinationAddr())
        .isEqualTo("h:1");
  }

  @Test
  void rejectsBadPeriodsAndTimeouts() {
    var base = ServiceProxyConfig.builder().endpointsFile(FILE);
    assertThatThrownBy(() -> base.minSyncPeriod(Duration.ofSeconds(40)).build())
        .hasMessage("syncPeriod: PT30S (expected: > 0 and >= minSyncPeriod PT40S)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).minSyncPeriod(Duration.ofSeconds(-1)).build())
        .hasMessage("minSyncPeriod: PT-1S (expected: >= 0)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).dialTimeouts(List.of()).build())
        .hasMessage("dialTimeouts: [] (expected: at least one)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).syncBurst(0).build())
        .hasMessage("syncBurst: 0 (expected: >= 1)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).adminPort(70000).build())
        .hasMessage("adminPort: 70000 (expected: <= 65535)");
  }

  @Test
  void rejectsAReadSizeOutsideFourKibibytesToSixteenMebibytes() {
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).maxReadSize(0).build())
        .hasMessage("maxReadSize: 0 (expected: >= 4096 and <= 16777216)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).maxReadSize(4095).build())
        .hasMessage("maxReadSize: 4095 (expected: >= 4096 and <= 16777216)");
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(FILE).maxReadSize((16 << 20) + 1).build())
        .hasMessage("maxReadSize: 16777217 (expected: >= 4096 and <= 16777216)");
    assertThat(ServiceProxyConfig.builder().endpointsFile(FILE).maxReadSize(4096).build().maxReadSize())
        .isEqualTo(4096);
  }
}
