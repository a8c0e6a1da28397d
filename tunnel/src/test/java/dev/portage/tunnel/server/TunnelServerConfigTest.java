package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TunnelServerConfigTest {

  @Test
  void invalidValuesNameTheFieldAndTheExpectation() {
    assertThatThrownBy(() -> TunnelServerConfig.builder().serverCount(0).build())
        .hasMessage("serverCount: 0 (expected: >= 1)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().agentPort(70000).build())
        .hasMessage("agentPort: 70000 (expected: 0..65535)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().healthPort(-2).build())
        .hasMessage("healthPort: -2 (expected: -1 (off) or 0..65535)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().udsName(Path.of("/tmp/s")).build())
        .hasMessage("serverPort: 8090 (expected: 0 when udsName is set)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().xfrChannelSize(0).build())
        .hasMessage("xfrChannelSize: 0 (expected: > 0)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().backendDialTimeout(Duration.ofSeconds(-1)).build())
        .hasMessage("backendDialTimeout: PT-1S (expected: >= 0)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().tlsMinVersion("VersionTLS10").build())
        .hasMessage("tlsMinVersion: \"VersionTLS10\" (expected: VersionTLS12 or VersionTLS13)");
    assertThatThrownBy(() -> TunnelServerConfig.builder()
        .agentTokenAuth(new AgentTokenAuth("ns", "sa", "aud"))
        .agentTls(new TlsFiles(Path.of("c"), Path.of("k"), Path.of("ca"))).build())
        .hasMessageContaining("exclusive");
    assertThatThrownBy(() -> TunnelServerConfig.builder().flowControlWindow(-1).build())
        .hasMessage("flowControlWindow: -1 (expected: 0 (off) or 1..1073741824)");
    assertThatThrownBy(() -> TunnelServerConfig.builder().flowControlWindow((1L << 30) + 1).build())
        .hasMessage("flowControlWindow: 1073741825 (expected: 0 (off) or 1..1073741824)");
    assertThat(TunnelServerConfig.builder().build().flowControlWindow()).isEqualTo(4 << 20);
    assertThat(TunnelServerConfig.builder().flowControlWindow(0).build().flowControl()).isFalse();
    assertThatThrownBy(() -> new AgentTokenAuth("ns", "", "aud"))
        .hasMessage("agentServiceAccount: \"\" (expected: non-empty with token auth)");
  }

  @Test
  void strategiesAndLabelsParseLikeUpstreamFlags() {
    assertThat(ProxyStrategy.parseList("destHost, default")).containsExactly(ProxyStrategy.DEST_HOST, ProxyStrategy.DEFAULT);
    assertThatThrownBy(() -> ProxyStrategy.parseList("default,default")).hasMessageContaining("twice");
    assertThatThrownBy(() -> ProxyStrategy.parseList(",")).hasMessageContaining("at least one");
    assertThat(TunnelServerConfig.parseLabels("a=b,c=d")).isEqualTo(Map.of("a", "b", "c", "d"));
    assertThatThrownBy(() -> TunnelServerConfig.parseLabels("novalue")).hasMessage("label: \"novalue\" (expected: key=value)");
  }

  @Test
  void toBuilderKeepsEveryField() {
    TunnelServerConfig c = TunnelServerConfig.builder().ephemeralPorts().serverId("x").serverCount(2)
        .backendDialTimeout(Duration.ofSeconds(3)).leaseLabels(Map.of("a", "b")).build();
    assertThat(c.toBuilder().build()).isEqualTo(c);
  }

  @Test
  void dialErrorStatusFollowsTheErrorText() {
    assertThat(HttpStatusResponse.statusForDialError("dial tcp: i/o timeout")).isEqualTo(504);
    assertThat(HttpStatusResponse.statusForDialError("context deadline exceeded")).isEqualTo(504);
    assertThat(HttpStatusResponse.statusForDialError("socket: too many open files")).isEqualTo(503);
    assertThat(HttpStatusResponse.statusForDialError("connection refused")).isEqualTo(502);
  }
}
