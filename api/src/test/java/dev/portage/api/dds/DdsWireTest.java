package dev.portage.api.dds;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.portage.api.dds.rules.AuthenticationPolicy;
import dev.portage.api.dds.rules.AuthenticationPolicyPortLevel;
import dev.portage.api.dds.rules.AuthenticationPolicySelector;
import dev.portage.api.dds.rules.AuthenticationPolicyToClient;
import dev.portage.api.dds.rules.AuthenticationSpecToClient;
import dev.portage.api.dds.rules.AuthorizationPolicy;
import dev.portage.api.dds.rules.AuthorizationPolicyCondition;
import dev.portage.api.dds.rules.AuthorizationPolicyMatch;
import dev.portage.api.dds.rules.AuthorizationPolicyRule;
import dev.portage.api.dds.rules.AuthorizationPolicyRuleToClient;
import dev.portage.api.dds.rules.AuthorizationPolicySource;
import dev.portage.api.dds.rules.AuthorizationPolicyTarget;
import dev.portage.api.dds.rules.AuthorizationPolicyToClient;
import dev.portage.api.dds.rules.ConditionRoute;
import dev.portage.api.dds.rules.ConditionRouteToClient;
import dev.portage.api.dds.rules.DynamicConfig;
import dev.portage.api.dds.rules.DynamicConfigToClient;
import dev.portage.api.dds.rules.OverrideConfig;
import dev.portage.api.dds.rules.ServiceNameMapping;
import dev.portage.api.dds.rules.ServiceNameMappingToClient;
import dev.portage.api.dds.rules.TagRoute;
import dev.portage.api.dds.rules.TagRouteToClient;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Pins the wire facts of dds (shared/specs/rules.md) to the generated code. */
class DdsWireTest {

  private static String hex(com.google.protobuf.MessageLite m) {
    return HexFormat.of().formatHex(m.toByteArray());
  }

  @Test
  void methodNameCarriesTheUpstreamPackage() {
    assertThat(RuleServiceGrpc.getObserveMethod().getFullMethodName())
        .isEqualTo("org.apache.dubbo.auth.v1alpha1.RuleService/Observe");
    assertThat(RuleServiceGrpc.getObserveMethod().getType())
        .isEqualTo(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING);
  }

  @Test
  void observeMessagesUseUpstreamFieldNumbers() {
    ObserveRequest req = ObserveRequest.newBuilder().setNonce("1").setType("t").build();
    // nonce=1 "1", type=2 "t"
    assertThat(hex(req)).isEqualTo("0a0131" + "120174");
    ObserveResponse rsp =
        ObserveResponse.newBuilder()
            .setNonce("2")
            .setType("t")
            .setRevision(5)
            .addData(Any.newBuilder().setTypeUrl("u").build())
            .build();
    // nonce=1, type=2, revision=3 varint, data=4 (Any: type_url=1 "u")
    assertThat(hex(rsp)).isEqualTo("0a0132" + "120174" + "1805" + "2203" + "0a0175");
  }

  @Test
  void anyTypeUrlsNameTheUpstreamMessages() {
    assertThat(Any.pack(TagRouteToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.TagRouteToClient");
    assertThat(Any.pack(ConditionRouteToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.ConditionRouteToClient");
    assertThat(Any.pack(DynamicConfigToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.DynamicConfigToClient");
    assertThat(Any.pack(ServiceNameMappingToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.ServiceNameMappingToClient");
    assertThat(Any.pack(AuthenticationPolicyToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.AuthenticationPolicyToClient");
    assertThat(Any.pack(AuthorizationPolicyToClient.getDefaultInstance()).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.AuthorizationPolicyToClient");
  }

  @Test
  void toClientHasKeyOneAndSpecTwo() {
    TagRouteToClient t =
        TagRouteToClient.newBuilder()
            .setKey("a/b")
            .setSpec(TagRoute.newBuilder().setPriority(1))
            .build();
    assertThat(hex(t)).isEqualTo("0a03612f62" + "1202" + "0801");
  }

  @Test
  void tagRouteFieldNumbers() {
    TagRoute t =
        TagRoute.newBuilder()
            .setPriority(1)
            .setEnabled(true)
            .setRuntime(true)
            .setKey("k")
            .setConfigVersion("v")
            .setForce(true)
            .addTags(dev.portage.api.dds.rules.Tag.newBuilder().setName("n").addAddresses("a"))
            .build();
    assertThat(hex(t))
        .isEqualTo("0801" + "1001" + "1801" + "22016b" + "2a0176" + "3001" + "3a06" + "0a016e" + "120161");
  }

  @Test
  void conditionRouteFieldNumbers() {
    ConditionRoute c =
        ConditionRoute.newBuilder()
            .setPriority(1)
            .setEnabled(true)
            .setForce(true)
            .setRuntime(true)
            .setKey("k")
            .setScope("s")
            .addConditions("c")
            .setConfigVersion("v")
            .build();
    assertThat(hex(c))
        .isEqualTo("0801" + "1001" + "1801" + "2001" + "2a016b" + "320173" + "3a0163" + "420176");
  }

  @Test
  void dynamicConfigAndOverrideFieldNumbers() {
    DynamicConfig d =
        DynamicConfig.newBuilder()
            .setKey("k")
            .setScope("s")
            .setConfigVersion("v")
            .setEnabled(true)
            .addConfigs(OverrideConfig.newBuilder().setSide("p").setType("t").setEnabled(true))
            .build();
    assertThat(hex(d))
        .isEqualTo("0a016b" + "120173" + "1a0176" + "2001" + "2a08" + "0a0170" + "3a0174" + "4001");
    assertThat(hex(OverrideConfig.newBuilder().putParameters("a", "b").build()))
        .isEqualTo("2206" + "0a0161" + "120162");
  }

  @Test
  void serviceNameMappingFieldNumbers() {
    ServiceNameMapping m =
        ServiceNameMapping.newBuilder().setInterfaceName("i").addApplicationNames("a").build();
    assertThat(hex(m)).isEqualTo("0a0169" + "120161");
  }

  @Test
  void authorizationPolicyFieldNumbers() {
    AuthorizationPolicy p =
        AuthorizationPolicy.newBuilder()
            .setAction("ALLOW")
            .setSamples(0.5f)
            .setOrder(1f)
            .setMatchType("anyMatch")
            .build();
    // action=1, samples=3 fixed32 0.5f, order=4 fixed32 1.0f, matchType=5
    assertThat(hex(p))
        .isEqualTo("0a05414c4c4f57" + "1d0000003f" + "250000803f" + "2a08616e794d61746368");
    AuthorizationPolicyRule r =
        AuthorizationPolicyRule.newBuilder()
            .setFrom(AuthorizationPolicySource.newBuilder().addNamespaces("a"))
            .setTo(AuthorizationPolicyTarget.newBuilder().addIpBlocks("b"))
            .setWhen(AuthorizationPolicyCondition.newBuilder().setKey("k"))
            .build();
    assertThat(hex(r)).isEqualTo("0a03" + "0a0161" + "1203" + "1a0162" + "1a03" + "0a016b");
    AuthorizationPolicyRuleToClient rc =
        AuthorizationPolicyRuleToClient.newBuilder()
            .setFrom(AuthorizationPolicySource.newBuilder().addPrincipals("p"))
            .setWhen(AuthorizationPolicyCondition.newBuilder().addValues(
                AuthorizationPolicyMatch.newBuilder().setType("t").setValue("v")))
            .build();
    assertThat(hex(rc)).isEqualTo("0a03" + "2a0170" + "1208" + "1206" + "0a0174" + "120176");
  }

  @Test
  void authenticationPolicyFieldNumbers() {
    AuthenticationPolicy p =
        AuthenticationPolicy.newBuilder()
            .setAction("STRICT")
            .addSelector(AuthenticationPolicySelector.newBuilder().addNotNamespaces("n"))
            .addPortLevel(AuthenticationPolicyPortLevel.newBuilder().setPort(80).setAction("NONE"))
            .build();
    assertThat(hex(p))
        .isEqualTo("0a06535452494354" + "1203" + "12016e" + "1a08" + "0850" + "12044e4f4e45");
    AuthenticationSpecToClient c =
        AuthenticationSpecToClient.newBuilder()
            .setAction("A")
            .addPortLevel(AuthenticationPolicyPortLevel.newBuilder().setPort(1))
            .build();
    assertThat(hex(c)).isEqualTo("0a0141" + "1202" + "0801");
  }
}
