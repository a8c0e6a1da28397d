package dev.portage.control.destination;

/** The store kinds the destination server reads. */
final class KubeKinds {

  static final String SERVICE = "v1/Service";
  static final String ENDPOINT_SLICE = "discovery.k8s.io/v1/EndpointSlice";
  static final String SERVICE_PROFILE = "linkerd.io/v1alpha2/ServiceProfile";

  /** EndpointSlice label naming the Service the slice belongs to. */
  static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

  /** Service annotation listing opaque ports ("3306,4000-4100"). */
  static final String OPAQUE_PORTS_ANNOTATION = "config.linkerd.io/opaque-ports";

  private KubeKinds() {}
}
