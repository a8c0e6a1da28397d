package dev.portage.control.client.rules;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.portage.api.dds.rules.AuthenticationPolicyToClient;
import dev.portage.api.dds.rules.AuthorizationPolicyToClient;
import dev.portage.api.dds.rules.ConditionRouteToClient;
import dev.portage.api.dds.rules.DynamicConfigToClient;
import dev.portage.api.dds.rules.ServiceNameMappingToClient;
import dev.portage.api.dds.rules.TagRouteToClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One full state of a dds rule type as a {@link RulesClient} delivers it: every object of the type
 * (the previous state is replaced, not patched). Immutable.
 *
 * @param type e.g. {@code dubbo.apache.org/v1alpha1/TagRoute}
 * @param revision the control plane's revision of this state
 * @param data each object as the packed {@code <Kind>ToClient}
 */
public record RuleUpdate(String type, long revision, List<Any> data) {

  private static final Map<String, Class<? extends Message>> KNOWN =
      Map.of(
          "type.googleapis.com/dubbo.apache.org.v1alpha1.TagRouteToClient", TagRouteToClient.class,
          "type.googleapis.com/dubbo.apache.org.v1alpha1.ConditionRouteToClient", ConditionRouteToClient.class,
          "type.googleapis.com/dubbo.apache.org.v1alpha1.DynamicConfigToClient", DynamicConfigToClient.class,
          "type.googleapis.com/dubbo.apache.org.v1alpha1.ServiceNameMappingToClient",
              ServiceNameMappingToClient.class,
          "type.googleapis.com/dubbo.apache.org.v1alpha1.AuthenticationPolicyToClient",
              AuthenticationPolicyToClient.class,
          "type.googleapis.com/dubbo.apache.org.v1alpha1.AuthorizationPolicyToClient",
              AuthorizationPolicyToClient.class);

  public RuleUpdate {
    Objects.requireNonNull(type, "type");
    data = List.copyOf(data);
  }

  /**
   * The objects decoded as their {@code <Kind>ToClient} messages.
   *
   * @throws InvalidProtocolBufferException if an entry has an unknown type URL or does not parse
   */
  public List<Message> messages() throws InvalidProtocolBufferException {
    List<Message> out = new ArrayList<>(data.size());
    for (Any a : data) {
      Class<? extends Message> c = KNOWN.get(a.getTypeUrl());
      if (c == null) {
        throw new InvalidProtocolBufferException("unknown type URL " + a.getTypeUrl() + " in " + type);
      }
      out.add(a.unpack(c));
    }
    return out;
  }

  /** The objects decoded as {@code clazz}, e.g. {@code TagRouteToClient.class}. */
  public <T extends Message> List<T> messages(Class<T> clazz) throws InvalidProtocolBufferException {
    List<T> out = new ArrayList<>(data.size());
    for (Any a : data) {
      out.add(a.unpack(clazz));
    }
    return out;
  }
}
