package dev.portage.control.source.kubernetes;

import dev.portage.control.source.Kinds;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;

/**
 * One API resource the Kubernetes source informs on: its group ("" for the core group), version,
 * kind and plural. Every one is namespaced.
 */
record WatchedKind(String group, String version, String kind, String plural) {

  /** What {@link KubernetesSource} watches, in {@link Kinds#ALL} order. */
  static final List<WatchedKind> ALL =
      List.of(
          dds("AuthenticationPolicy", "authenticationpolicies"),
          dds("AuthorizationPolicy", "authorizationpolicies"),
          dds("ConditionRoute", "conditionroutes"),
          dds("DynamicConfig", "dynamicconfigs"),
          dds("ServiceNameMapping", "servicenamemappings"),
          dds("TagRoute", "tagroutes"),
          new WatchedKind("", "v1", "Service", "services"),
          new WatchedKind("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
          new WatchedKind("linkerd.io", "v1alpha2", "ServiceProfile", "serviceprofiles"));

  private static WatchedKind dds(String kind, String plural) {
    return new WatchedKind("dubbo.apache.org", "v1alpha1", kind, plural);
  }

  String apiVersion() {
    return group.isEmpty() ? version : group + "/" + version;
  }

  /** The store kind string, one of {@link Kinds#ALL}. */
  String storeKind() {
    return apiVersion() + "/" + kind;
  }

  ResourceDefinitionContext context() {
    return new ResourceDefinitionContext.Builder()
        .withGroup(group)
        .withVersion(version)
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(true)
        .build();
  }
}
