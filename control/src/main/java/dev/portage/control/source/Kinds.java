package dev.portage.control.source;

import java.util.List;
import java.util.Set;

/**
 * The object kinds the sources feed into the store, as {@link dev.portage.control.store.ResourceKey}
 * kind strings ({@code apiVersion + "/" + kind}): the six dds rule kinds, and the Service,
 * EndpointSlice and ServiceProfile objects the destination server reads.
 */
public final class Kinds {

  public static final String AUTHENTICATION_POLICY = "dubbo.apache.org/v1alpha1/AuthenticationPolicy";
  public static final String AUTHORIZATION_POLICY = "dubbo.apache.org/v1alpha1/AuthorizationPolicy";
  public static final String CONDITION_ROUTE = "dubbo.apache.org/v1alpha1/ConditionRoute";
  public static final String DYNAMIC_CONFIG = "dubbo.apache.org/v1alpha1/DynamicConfig";
  public static final String SERVICE_NAME_MAPPING = "dubbo.apache.org/v1alpha1/ServiceNameMapping";
  public static final String TAG_ROUTE = "dubbo.apache.org/v1alpha1/TagRoute";

  public static final String SERVICE = "v1/Service";
  public static final String ENDPOINT_SLICE = "discovery.k8s.io/v1/EndpointSlice";
  public static final String SERVICE_PROFILE = "linkerd.io/v1alpha2/ServiceProfile";

  /** The dds rule kinds, in the order of the spec. */
  public static final List<String> RULES =
      List.of(
          AUTHENTICATION_POLICY,
          AUTHORIZATION_POLICY,
          CONDITION_ROUTE,
          DYNAMIC_CONFIG,
          SERVICE_NAME_MAPPING,
          TAG_ROUTE);

  /** Every supported kind: the rules, then Service, EndpointSlice, ServiceProfile. */
  public static final List<String> ALL =
      List.of(
          AUTHENTICATION_POLICY,
          AUTHORIZATION_POLICY,
          CONDITION_ROUTE,
          DYNAMIC_CONFIG,
          SERVICE_NAME_MAPPING,
          TAG_ROUTE,
          SERVICE,
          ENDPOINT_SLICE,
          SERVICE_PROFILE);

  private static final Set<String> ALL_SET = Set.copyOf(ALL);

  private Kinds() {}

  /** Whether the sources carry objects of {@code kind} ({@code apiVersion/Kind}). */
  public static boolean isSupported(String kind) {
    return ALL_SET.contains(kind);
  }
}
