package dev.portage.control.rules;

import com.google.protobuf.Message;
import dev.portage.api.dds.rules.AuthenticationPolicy;
import dev.portage.api.dds.rules.AuthorizationPolicy;
import dev.portage.api.dds.rules.ConditionRoute;
import dev.portage.api.dds.rules.ConditionRouteToClient;
import dev.portage.api.dds.rules.DynamicConfig;
import dev.portage.api.dds.rules.DynamicConfigToClient;
import dev.portage.api.dds.rules.ServiceNameMapping;
import dev.portage.api.dds.rules.ServiceNameMappingToClient;
import dev.portage.api.dds.rules.TagRoute;
import dev.portage.api.dds.rules.TagRouteToClient;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The six dubbo rule kinds dds serves: the dds {@code type} (equal to the store kind), the spec
 * message a CRD spec parses into, and, for kinds every client gets alike, how the {@code
 * <Kind>ToClient} message is built. The two policy kinds are built per client ({@link PolicyFilter}).
 */
enum RuleKind {
  TAG_ROUTE("TagRoute", TagRoute::newBuilder,
      (key, spec) -> TagRouteToClient.newBuilder().setKey(key).setSpec((TagRoute) spec).build()),
  CONDITION_ROUTE("ConditionRoute", ConditionRoute::newBuilder,
      (key, spec) -> ConditionRouteToClient.newBuilder().setKey(key).setSpec((ConditionRoute) spec).build()),
  DYNAMIC_CONFIG("DynamicConfig", DynamicConfig::newBuilder,
      (key, spec) -> DynamicConfigToClient.newBuilder().setKey(key).setSpec((DynamicConfig) spec).build()),
  SERVICE_NAME_MAPPING("ServiceNameMapping", ServiceNameMapping::newBuilder,
      (key, spec) ->
          ServiceNameMappingToClient.newBuilder().setKey(key).setSpec((ServiceNameMapping) spec).build()),
  AUTHENTICATION_POLICY("AuthenticationPolicy", AuthenticationPolicy::newBuilder, null),
  AUTHORIZATION_POLICY("AuthorizationPolicy", AuthorizationPolicy::newBuilder, null);

  static final String GROUP_VERSION = "dubbo.apache.org/v1alpha1/";

  private static final Map<String, RuleKind> BY_TYPE =
      Stream.of(values()).collect(Collectors.toUnmodifiableMap(RuleKind::type, k -> k));

  private final String type;
  private final Supplier<Message.Builder> specBuilder;
  private final BiFunction<String, Message, Message> toClient;

  RuleKind(String kind, Supplier<Message.Builder> specBuilder, BiFunction<String, Message, Message> toClient) {
    this.type = GROUP_VERSION + kind;
    this.specBuilder = specBuilder;
    this.toClient = toClient;
  }

  /** The dds type and store kind, e.g. {@code dubbo.apache.org/v1alpha1/TagRoute}. */
  String type() {
    return type;
  }

  /** The kind for a dds type, or null if dds does not know it. */
  static RuleKind ofType(String type) {
    return BY_TYPE.get(type);
  }

  Message.Builder newSpecBuilder() {
    return specBuilder.get();
  }

  /** Whether each client gets its own filtered view. */
  boolean perClient() {
    return toClient == null;
  }

  /** The {@code <Kind>ToClient} for a kind every client gets alike. */
  Message toClient(String key, Message spec) {
    if (toClient == null) {
      throw new IllegalStateException(type + " is built per client");
    }
    return toClient.apply(key, spec);
  }
}
