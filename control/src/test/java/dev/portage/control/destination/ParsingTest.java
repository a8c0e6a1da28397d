package dev.portage.control.destination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The small parsers of the destination server: authorities, Go durations, quantities, port lists. */
class ParsingTest {

  @Test
  void authorityForms() {
    Authority a = Authority.parse("web.default.svc.cluster.local:8080", "cluster.local");
    assertThat(a.service()).isEqualTo(new ServiceRef("default", "web"));
    assertThat(a.port()).isEqualTo(8080);
    assertThat(a.hostname()).isNull();
    assertThat(a.fqdn()).isEqualTo("web.default.svc.cluster.local");

    Authority pod = Authority.parse("web-0.db.prod.svc.example.org:5432", "example.org");
    assertThat(pod.service()).isEqualTo(new ServiceRef("prod", "db"));
    assertThat(pod.hostname()).isEqualTo("web-0");
    assertThat(pod.fqdn()).isEqualTo("db.prod.svc.example.org");

    assertThat(Authority.parse("WEB.Default.svc.cluster.local", "cluster.local").port()).isEqualTo(80);
    assertThatThrownBy(() -> Authority.parse("web.default:80", "cluster.local"))
        .hasMessage("path: web.default:80 (expected: <service>.<namespace>.svc.cluster.local:<port>)");
    assertThatThrownBy(() -> Authority.parse("10.0.0.1:80", "cluster.local"))
        .hasMessage("path: 10.0.0.1:80 is an IP address (expected: a service name)");
  }

  @Test
  void goDurations() {
    assertThat(GoDuration.parse("1s")).isEqualTo(Duration.ofSeconds(1));
    assertThat(GoDuration.parse("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(GoDuration.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDuration.parse("1.5h")).isEqualTo(Duration.ofMinutes(90));
    assertThat(GoDuration.parse("300us")).isEqualTo(Duration.ofNanos(300_000));
    assertThat(GoDuration.parse("2µs")).isEqualTo(Duration.ofNanos(2_000));
    assertThat(GoDuration.parse("10ns")).isEqualTo(Duration.ofNanos(10));
    assertThat(GoDuration.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(GoDuration.parse("-1s")).isEqualTo(Duration.ofSeconds(-1));
    for (String bad : new String[] {"", "1", "s", "1x", "1..2s", "-", "1s2"}) {
      assertThatThrownBy(() -> GoDuration.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("expected: e.g. 250ms");
    }
    assertThat(GoDuration.toProto(Duration.ofMillis(1500)))
        .isEqualTo(com.google.protobuf.Duration.newBuilder().setSeconds(1).setNanos(500_000_000).build());
  }

  @Test
  void quantitiesAreMilliValues() {
    assertThat(Quantity.milliValue("1")).isEqualTo(1000);
    assertThat(Quantity.milliValue("500m")).isEqualTo(500);
    assertThat(Quantity.milliValue("0.25")).isEqualTo(250);
    assertThat(Quantity.milliValue("2k")).isEqualTo(2_000_000);
    assertThat(Quantity.milliValue("1Ki")).isEqualTo(1_024_000);
    assertThat(Quantity.milliValue("1G")).isEqualTo(0xFFFF_FFFFL);
    assertThat(Quantity.milliValue(Kube.yaml("3"))).isEqualTo(3000);
    assertThat(Quantity.milliValue("0")).isZero();
    assertThatThrownBy(() -> Quantity.milliValue("-1")).hasMessage("weight: -1 (expected: >= 0)");
    assertThatThrownBy(() -> Quantity.milliValue("abc")).hasMessageContaining("expected: a quantity");
    assertThatThrownBy(() -> Quantity.milliValue("1q")).hasMessageContaining("expected: a quantity");
  }

  @Test
  void opaquePortLists() {
    assertThat(OpaquePorts.contains("3306, 4000-4100", 4050)).isTrue();
    assertThat(OpaquePorts.contains("3306, 4000-4100", 3306)).isTrue();
    assertThat(OpaquePorts.contains("3306, x, 4000-4100", 80)).isFalse();
    assertThat(OpaquePorts.contains(Kube.yaml("[25, \"587\"]"), 587)).isTrue();
  }

  @Test
  void contextTokenIsLenient() {
    assertThat(ContextToken.parse("{\"ns\":\"a\",\"nodeName\":\"n\",\"pod\":\"p\"}"))
        .isEqualTo(new ContextToken("a", "n", "p"));
    assertThat(ContextToken.parse("ns:a")).isEqualTo(ContextToken.EMPTY);
    assertThat(ContextToken.parse("[1]")).isEqualTo(ContextToken.EMPTY);
    assertThat(ContextToken.parse("{\"ns\":7}")).isEqualTo(ContextToken.EMPTY);
  }

  @Test
  void configValidation() {
    assertThatThrownBy(() -> DestinationConfig.defaults().withStreamQueueLimit(0))
        .hasMessage("streamQueueLimit: 0 (expected: > 0)");
    assertThatThrownBy(() -> DestinationConfig.defaults().withClusterDomain(""))
        .hasMessageContaining("expected: a domain like cluster.local");
  }
}
