package dev.portage.proxy.service.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.proxy.service.model.Protocol;
import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The table laid out for Service ports, kube-proxy's way, without a kernel. */
class ProxyRulesTest {

  private final ProxyRules rules = new ProxyRules(
      new NftablesOptions("portage-proxy", "10.244.0.0/16", false, List.of(), 14));

  private static ServicePort port(List<ServiceEndpoint> endpoints, int nodePort, boolean externalLocal,
      Duration affinity) {
    return new ServicePort("default", "web", "http", Protocol.TCP, "10.96.0.10", 80, nodePort,
        List.of("203.0.113.7"), List.of(), affinity, false, externalLocal, endpoints);
  }

  private static String chain(Fragment f, String prefix) {
    return f.chains().stream().map(Chain::name).filter(n -> n.startsWith(prefix)).findFirst().orElseThrow();
  }

  private static List<String> rulesOf(Fragment f, String prefix) {
    return f.chains().stream().filter(c -> c.name().startsWith(prefix)).findFirst().orElseThrow().rules();
  }

  @Test
  void chainNamesFollowKubeProxy() {
    assertThat(NftNames.hashed("service-", "default/web/tcp/http"))
        .matches("service-[A-Z2-7]{8}-default/web/tcp/http");
    assertThat(NftNames.hash("a")).isNotEqualTo(NftNames.hash("b")).hasSize(8);
  }

  @Test
  void clusterIpPicksOneOfItsEndpointsAtRandomFromASharedMap() {
    Fragment f = rules.servicePort(port(List.of(
        ServiceEndpoint.ready("10.244.0.11", 8080, true), ServiceEndpoint.ready("10.244.0.12", 8080, false)),
        0, false, null), null);
    String service = chain(f, "service-");
    assertThat(f.elements().get(ProxyRules.SERVICE_IPS)).containsEntry("10.96.0.10 . tcp . 80", "goto " + service);
    assertThat(f.elements().get(ProxyRules.SERVICE_IPS))
        .containsEntry("203.0.113.7 . tcp . 80", "goto " + chain(f, "external-"));
    assertThat(f.elements().get(ProxyRules.CLUSTER_IPS)).containsKey("10.96.0.10");
    List<String> body = rulesOf(f, "service-");
    assertThat(body.get(0)).isEqualTo(
        "ip daddr 10.96.0.10 meta l4proto tcp th dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade");
    assertThat(body.get(1)).matches(
        "meta l4proto tcp dnat ip addr \\. port to numgen random mod 2 offset \\d+ map @endpoints-tcp-\\d\\d");
    String map = body.get(1).substring(body.get(1).indexOf('@') + 1);
    assertThat(f.elements().get(map).values()).containsExactlyInAnyOrder("10.244.0.11 . 8080", "10.244.0.12 . 8080");
    assertThat(f.elements().get(ProxyRules.HAIRPIN)).containsKeys("10.244.0.11 . 10.244.0.11");
    assertThat(rulesOf(f, "external-")).containsExactly("jump mark-for-masquerade", "goto " + service);
  }

  @Test
  void oneEndpointIsDnatedWithoutAMapAndKeepsItsRangeWhileItFits() {
    Fragment one = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true)),
        0, false, null), null);
    assertThat(rulesOf(one, "service-").get(1)).isEqualTo("meta l4proto tcp dnat to 10.244.0.11:8080");
    Fragment two = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true),
        ServiceEndpoint.ready("10.244.0.12", 8080, true)), 0, false, null), null);
    Fragment three = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true),
        ServiceEndpoint.ready("10.244.0.12", 8080, true), ServiceEndpoint.ready("10.244.0.13", 8080, true)),
        0, false, null), null);
    String offset2 = rulesOf(two, "service-").get(1).replaceAll(".* offset (\\d+) .*", "$1");
    String offset3 = rulesOf(three, "service-").get(1).replaceAll(".* offset (\\d+) .*", "$1");
    assertThat(offset3).isEqualTo(offset2);
  }

  @Test
  void noEndpointsRejectsOnEveryAddress() {
    Fragment f = rules.servicePort(port(List.of(), 30080, false, null), null);
    assertThat(f.chains()).isEmpty();
    assertThat(f.elements().get(ProxyRules.NO_ENDPOINT_SERVICES)).isEqualTo(Map.of(
        "10.96.0.10 . tcp . 80", "goto reject-chain", "203.0.113.7 . tcp . 80", "goto reject-chain"));
    assertThat(f.elements().get(ProxyRules.NO_ENDPOINT_NODEPORTS)).containsEntry("tcp . 30080", "goto reject-chain");
  }

  @Test
  void terminatingEndpointsServeOnlyWhenNoneIsReady() {
    ServiceEndpoint terminating = new ServiceEndpoint("10.244.0.11", 8080, false, true, true, true);
    ServiceEndpoint notServing = new ServiceEndpoint("10.244.0.12", 8080, false, false, true, true);
    Fragment f = rules.servicePort(port(List.of(terminating, notServing), 0, false, null), null);
    assertThat(rulesOf(f, "service-").get(1)).isEqualTo("meta l4proto tcp dnat to 10.244.0.11:8080");
    Fragment withReady = rules.servicePort(port(List.of(terminating,
        ServiceEndpoint.ready("10.244.0.13", 8080, false)), 0, false, null), null);
    assertThat(rulesOf(withReady, "service-").get(1)).isEqualTo("meta l4proto tcp dnat to 10.244.0.13:8080");
  }

  @Test
  void externalTrafficPolicyLocalSendsOutsideTrafficToLocalEndpointsOnly() {
    Fragment f = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true),
        ServiceEndpoint.ready("10.244.1.5", 8080, false)), 30080, true, null), null);
    String local = chain(f, "local-");
    assertThat(rulesOf(f, "external-")).containsExactly(
        "ip saddr 10.244.0.0/16 goto " + chain(f, "service-"),
        "fib saddr type local jump mark-for-masquerade",
        "fib saddr type local goto " + chain(f, "service-"),
        "goto " + local);
    assertThat(rulesOf(f, "local-").get(1)).isEqualTo("meta l4proto tcp dnat to 10.244.0.11:8080");
    assertThat(f.elements().get(ProxyRules.SERVICE_NODEPORTS)).containsEntry("tcp . 30080", "goto " + chain(f, "external-"));
  }

  @Test
  void clientIpAffinityUsesKubeProxysEndpointChainsAndTimedSets() {
    Fragment f = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true),
        ServiceEndpoint.ready("10.244.0.12", 8080, true)), 0, false, Duration.ofSeconds(60)), null);
    List<String> body = rulesOf(f, "service-");
    assertThat(body.get(1)).matches("ip saddr @affinity-\\S+ goto endpoint-\\S+");
    assertThat(body.get(3)).startsWith("numgen random mod 2 vmap { 0 : goto endpoint-");
    assertThat(f.sets()).anyMatch(s -> s.name().startsWith("affinity-")
        && s.spec().equals("type ipv4_addr ; flags dynamic,timeout ; timeout 60s ;"));
    assertThat(rulesOf(f, "endpoint-").get(0)).matches("update @affinity-\\S+ \\{ ip saddr \\}");
  }

  @Test
  void userspaceRedirectsEveryAddressToTheRelaysListener() {
    Fragment f = rules.servicePort(port(List.of(ServiceEndpoint.ready("10.244.0.11", 8080, true)),
        30080, false, null), 41234);
    assertThat(rulesOf(f, "service-")).containsExactly("meta l4proto tcp redirect to :41234");
    assertThat(f.elements().get(ProxyRules.SERVICE_NODEPORTS)).containsEntry("tcp . 30080", "goto " + chain(f, "service-"));
  }
}
