package dev.portage.tunnel.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AgentIdentifiersTest {

  @Test
  void parsesEveryKnownKeyAndIgnoresUnknownOnes() {
    AgentIdentifiers ids = AgentIdentifiers.parse(
        "host=a.example&host=b.example&ipv4=10.0.0.1&ipv6=fd00%3A%3A1&cidr=10.0.0.0%2F8&default-route=true&uid=x&zone=eu");
    assertThat(ids.hosts()).containsExactly("a.example", "b.example");
    assertThat(ids.ipv4()).containsExactly("10.0.0.1");
    assertThat(ids.ipv6()).containsExactly("fd00::1");
    assertThat(ids.cidrs()).containsExactly("10.0.0.0/8");
    assertThat(ids.defaultRoute()).isTrue();
    assertThat(ids.matchesHost("fd00::1")).isTrue();
    assertThat(ids.matchesHost("10.0.0.1")).isTrue();
    assertThat(ids.matchesHost("c.example")).isFalse();
  }

  @Test
  void emptyOrMissingMeansNone() {
    assertThat(AgentIdentifiers.parse(null)).isEqualTo(AgentIdentifiers.NONE);
    assertThat(AgentIdentifiers.parse("")).isEqualTo(AgentIdentifiers.NONE);
    assertThat(AgentIdentifiers.parse("&&")).isEqualTo(AgentIdentifiers.NONE);
  }

  @Test
  void defaultRouteTakesGoBooleans() {
    assertThat(AgentIdentifiers.parse("default-route=1").defaultRoute()).isTrue();
    assertThat(AgentIdentifiers.parse("default-route=false").defaultRoute()).isFalse();
    assertThatThrownBy(() -> AgentIdentifiers.parse("default-route=yes"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("agentidentifiers: default-route=\"yes\" (expected: true or false)");
  }

  @Test
  void malformedInputIsRejectedWithTheInput() {
    assertThatThrownBy(() -> AgentIdentifiers.parse("host=%zz"))
        .hasMessage("agentidentifiers: malformed escape in \"host=%zz\" (expected: URL-query encoding)");
    assertThatThrownBy(() -> AgentIdentifiers.parse("host=a;host=b"))
        .hasMessageStartingWith("agentidentifiers: invalid ';' separator");
  }

  @Test
  void aServerIgnoresUnknownKeysButAnAgentRefusesThemInItsOwnFlag() {
    assertThat(AgentIdentifiers.parse("host=a&zone=eu").hosts()).containsExactly("a");
    assertThatThrownBy(() -> AgentIdentifiers.parseStrict("host=a&zone=eu"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("agentIdentifiers: unknown address type: zone (expected: host, ipv4, ipv6, cidr or default-route)");
    assertThat(AgentIdentifiers.parseStrict("host=a&ipv4=10.0.0.1&ipv6=fd00::1&cidr=10.0.0.0/8&default-route=true")
        .defaultRoute()).isTrue();
  }

  @Test
  void encodeRoundTrips() {
    AgentIdentifiers ids = AgentIdentifiers.parse("host=a&ipv6=fd00%3A%3A1&default-route=true");
    assertThat(AgentIdentifiers.parse(ids.encode())).isEqualTo(ids);
  }

  @Test
  void hostOfDialAddresses() {
    assertThat(HostPort.host("node1:10250")).isEqualTo("node1");
    assertThat(HostPort.host("[fd00::1]:443")).isEqualTo("fd00::1");
    assertThat(HostPort.host("fd00::1")).isEqualTo("fd00::1");
    assertThat(HostPort.host("node1")).isEqualTo("node1");
  }
}
