package dev.portage.proxy.service;

import dev.portage.core.time.GoDurations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EndpointsFileTest {

  private static final Path FILE = Path.of("endpoints.yaml");

  private static Map<String, ServiceSpec> parse(String yaml) throws Exception {
    return EndpointsFile.parse(FILE, yaml);
  }

  private static void assertRejected(String yaml, String message) {
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(MalformedEndpointsFileException.class)
        .hasMessage(message);
  }

  @Test
  void parsesEveryField() throws Exception {
    Map<String, ServiceSpec> services = parse("""
        services:
          - name: web
            listen: 127.0.0.1:8080
            endpoints: ["127.0.0.1:9001", "[::1]:9002"]
            balancer: p2c-ewma
            sessionAffinity: ClientIP
            affinityTimeout: 1h
          - name: api
            listen: 0.0.0.0:8081
            endpoints: []
          - name: remote
            listen: 127.0.0.1:0
            authority: web.default.svc.cluster.local:8080
        """);

    assertThat(services.keySet()).containsExactly("web", "api", "remote");
    ServiceSpec web = services.get("web");
    assertThat(web.listen()).isEqualTo(new InetSocketAddress("127.0.0.1", 8080));
    assertThat(web.endpoints())
        .containsExactly(new InetSocketAddress("127.0.0.1", 9001), new InetSocketAddress("::1", 9002));
    assertThat(web.balancer()).isEqualTo(BalancerKind.P2C_EWMA);
    assertThat(web.affinityTimeout()).isEqualTo(Duration.ofHours(1));
    assertThat(services.get("api").balancer()).isEqualTo(BalancerKind.ROUND_ROBIN);
    assertThat(services.get("api").affinityTimeout()).isNull();
    assertThat(services.get("api").endpoints()).isEmpty();
    assertThat(services.get("remote").authority()).isEqualTo("web.default.svc.cluster.local:8080");
  }

  @Test
  void clientIpAffinityDefaultsToKubeProxysThreeHours() throws Exception {
    ServiceSpec spec = parse("""
        services:
          - name: web
            listen: 127.0.0.1:0
            endpoints: []
            sessionAffinity: ClientIP
        """).get("web");
    assertThat(spec.affinityTimeout()).isEqualTo(Duration.ofSeconds(10800));
  }

  @Test
  void emptyServiceListIsValid() throws Exception {
    assertThat(parse("services: []\n")).isEmpty();
    assertThat(parse("services:\n")).isEmpty();
  }

  @Test
  void rejectsEmptyFile() {
    assertRejected("  \n", "endpoints.yaml:1: empty file (expected: services: [...]; write 'services: []' for none)");
  }

  @Test
  void rejectsYamlSyntaxErrorsWithTheirLine() {
    assertThatThrownBy(() -> parse("services:\n  - name: web\n    listen: \"127.0.0.1:1\n    endpoints: []\n"))
        .isInstanceOf(MalformedEndpointsFileException.class)
        .hasMessageStartingWith("endpoints.yaml:3: while scanning a quoted scalar");
    assertRejected("services:\n  - name: web\n    listen: [1]\n    endpoints: []\n",
        "endpoints.yaml:3: services[0]: listen: not a scalar (expected: a string)");
  }

  @Test
  void rejectsUnknownFieldsWithTheirLine() {
    assertThatThrownBy(() -> parse("services:\n  - name: web\n    listen: 127.0.0.1:1\n    endpoint: []\n"))
        .isInstanceOf(MalformedEndpointsFileException.class)
        .hasMessage("endpoints.yaml:4: services[0]: unknown field 'endpoint' (expected: one of name, listen,"
            + " endpoints, authority, balancer, sessionAffinity, affinityTimeout)");
    assertRejected("servics: []\n", "endpoints.yaml:1: unknown field 'servics' (expected: services)");
  }

  @Test
  void rejectsBadValuesNamingServiceAndField() {
    String head = "services:\n  - name: ok\n    listen: 127.0.0.1:1\n    endpoints: []\n";
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1\n    endpoints: []\n",
        "endpoints.yaml:6: services[1]: web: listen: 127.0.0.1 (expected: host:port)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:99999\n    endpoints: []\n",
        "endpoints.yaml:6: services[1]: web: listen: 127.0.0.1:99999 (expected: port 0..65535)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n    endpoints: []\n    balancer: fastest\n",
        "endpoints.yaml:8: services[1]: web: balancer: fastest (expected: round-robin, random or p2c-ewma)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n    endpoints: []\n    sessionAffinity: Cookie\n",
        "endpoints.yaml:8: services[1]: web: sessionAffinity: Cookie (expected: None or ClientIP)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n    endpoints: []\n"
            + "    sessionAffinity: ClientIP\n    affinityTimeout: soon\n",
        "endpoints.yaml:9: services[1]: web: affinityTimeout: soon (expected: a duration such as 10800s, 3h, 1m30s)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n    endpoints: []\n    affinityTimeout: 10s\n",
        "endpoints.yaml:8: services[1]: web: affinityTimeout: given without sessionAffinity: ClientIP");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n",
        "endpoints.yaml:5: services[1]: web: endpoints and authority: neither given (expected: exactly one)");
    assertRejected(head + "  - name: web\n    listen: 127.0.0.1:2\n    endpoints: [\"127.0.0.1:1\", \"127.0.0.1:1\"]\n",
        "endpoints.yaml:7: services[1]: web: endpoints: [127.0.0.1:1, 127.0.0.1:1] (expected: no duplicates)");
    assertRejected(head + "  - listen: 127.0.0.1:2\n    endpoints: []\n",
        "endpoints.yaml:5: services[1]: name: missing (expected: a service name)");
  }

  @Test
  void rejectsDuplicateNamesAndListenAddresses() {
    assertRejected("""
        services:
          - {name: web, listen: "127.0.0.1:1", endpoints: []}
          - {name: web, listen: "127.0.0.1:2", endpoints: []}
        """, "endpoints.yaml:3: services[1]: duplicate name 'web'");
    assertRejected("""
        services:
          - {name: web, listen: "127.0.0.1:1", endpoints: []}
          - {name: api, listen: "127.0.0.1:1", endpoints: []}
        """, "endpoints.yaml:3: services[1]: listen 127.0.0.1:1 already used by service 'web'");
  }

  @Test
  void portZeroMayRepeat() throws Exception {
    assertThat(parse("""
        services:
          - {name: web, listen: "127.0.0.1:0", endpoints: []}
          - {name: api, listen: "127.0.0.1:0", endpoints: []}
        """)).hasSize(2);
  }

  @Test
  void listenerTextRoundTrips() {
    assertThat(HostPort.format(HostPort.parse("[::1]:80", "x"))).isEqualTo("[0:0:0:0:0:0:0:1]:80");
    assertThat(HostPort.format(HostPort.parse("10.0.0.1:80", "x"))).isEqualTo("10.0.0.1:80");
    assertThat(List.of(GoDurations.parse("1m30s"), GoDurations.parse("250ms")))
        .containsExactly(Duration.ofSeconds(90), Duration.ofMillis(250));
  }
}
