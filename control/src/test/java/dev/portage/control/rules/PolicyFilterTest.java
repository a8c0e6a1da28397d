package dev.portage.control.rules;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.portage.api.dds.rules.AuthenticationPolicy;
import dev.portage.api.dds.rules.AuthenticationPolicySelector;
import dev.portage.api.dds.rules.AuthorizationPolicy;
import dev.portage.api.dds.rules.AuthorizationPolicyRule;
import dev.portage.api.dds.rules.AuthorizationPolicyTarget;
import dev.portage.api.dds.rules.AuthorizationPolicyToClient;
import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyFilterTest {

  private final PolicyFilter filter = new PolicyFilter("dubbo-system");
  private final ClientIdentity podA =
      new ClientIdentity("a", "cluster.local/ns/a/sa/app", "10.1.2.3");

  private static TypeSnapshot authz(String ns, AuthorizationPolicy p) {
    return new TypeSnapshot(RuleKind.AUTHORIZATION_POLICY, 1,
        List.of(new TypeSnapshot.Entry("p/" + ns, ns, null, p)), 0);
  }

  private static TypeSnapshot authn(String ns, AuthenticationPolicy p) {
    return new TypeSnapshot(RuleKind.AUTHENTICATION_POLICY, 1,
        List.of(new TypeSnapshot.Entry("p/" + ns, ns, null, p)), 0);
  }

  private static AuthorizationPolicy to(AuthorizationPolicyTarget.Builder t) {
    return AuthorizationPolicy.newBuilder().setAction("ALLOW").addRules(AuthorizationPolicyRule.newBuilder().setTo(t))
        .build();
  }

  private boolean applies(AuthorizationPolicyTarget.Builder t, ClientIdentity who) {
    return !filter.select(authz("dubbo-system", to(t)), who).isEmpty();
  }

  @Test
  void namespaceScope() {
    AuthorizationPolicy p = AuthorizationPolicy.newBuilder().setAction("DENY").build();
    assertThat(filter.select(authz("dubbo-system", p), ClientIdentity.anonymous())).hasSize(1);
    assertThat(filter.select(authz("a", p), podA)).hasSize(1);
    assertThat(filter.select(authz("b", p), podA)).isEmpty();
    assertThat(filter.select(authz("a", p), ClientIdentity.anonymous())).isEmpty();
  }

  @Test
  void ipBlocks() {
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("10.0.0.0/8"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("10.1.2.3"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("10.1.2.0/25"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("10.1.2.128/25"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addNotIpBlocks("10.0.0.0/8"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("fd00::/8"),
        podA.withIp("fd00::1"))).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("fd00::/8"), podA)).isFalse();
    // Malformed blocks and unknown IPs never match a positive list; hostnames are never resolved.
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("example.com"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("10.0.0.0/33"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("0.0.0.0/0"), podA.withIp(""))).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addIpBlocks("0.0.0.0/0"), podA)).isTrue();
  }

  @Test
  void principalsAndNamespaces() {
    assertThat(applies(AuthorizationPolicyTarget.newBuilder()
        .addPrincipals("spiffe://cluster.local/ns/a/sa/app"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addPrincipals("cluster.local/ns/a/*"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addPrincipals("*/sa/app"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addPrincipals("cluster.local/ns/b/sa/app"), podA))
        .isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addNotPrincipals("*"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addNamespaces("a"), podA)).isTrue();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addNotNamespaces("a"), podA)).isFalse();
    assertThat(applies(AuthorizationPolicyTarget.newBuilder().addNamespaces("a"), ClientIdentity.anonymous()))
        .isFalse();
  }

  @Test
  void authorizationKeepsOnlyMatchingRulesWithoutTheirTarget() throws Exception {
    AuthorizationPolicy p = AuthorizationPolicy.newBuilder()
        .setAction("ALLOW")
        .addRules(AuthorizationPolicyRule.newBuilder().setTo(AuthorizationPolicyTarget.newBuilder().addNamespaces("b")))
        .addRules(AuthorizationPolicyRule.newBuilder().setTo(AuthorizationPolicyTarget.newBuilder().addNamespaces("a")))
        .addRules(AuthorizationPolicyRule.newBuilder())
        .build();
    List<Any> out = filter.select(authz("dubbo-system", p), podA);
    assertThat(out.get(0).unpack(AuthorizationPolicyToClient.class).getSpec().getRulesCount()).isEqualTo(2);
  }

  @Test
  void authenticationSelectorsAreAlternatives() {
    AuthenticationPolicy p = AuthenticationPolicy.newBuilder()
        .setAction("STRICT")
        .addSelector(AuthenticationPolicySelector.newBuilder().addNamespaces("b"))
        .addSelector(AuthenticationPolicySelector.newBuilder().addIpBlocks("10.0.0.0/8"))
        .build();
    assertThat(filter.select(authn("dubbo-system", p), podA)).hasSize(1);
    assertThat(filter.select(authn("dubbo-system", p), podA.withIp("192.168.0.1"))).isEmpty();
  }

  @Test
  void spiffeIdParsing() {
    ClientIdentity id = ClientIdentity.fromSpiffeId("spiffe://td/ns/x/sa/y");
    assertThat(id.namespace()).isEqualTo("x");
    assertThat(id.principal()).isEqualTo("td/ns/x/sa/y");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> ClientIdentity.fromSpiffeId("spiffe://td/x"))
        .hasMessage("SPIFFE ID: spiffe://td/x (expected: spiffe://<td>/ns/<ns>/sa/<sa>)");
  }
}
