package dev.portage.control.destination;

/** A Kubernetes Service by namespace and name. */
record ServiceRef(String namespace, String name) {

  /** {@code name.namespace.svc.domain}. */
  String fqdn(String clusterDomain) {
    return name + "." + namespace + ".svc." + clusterDomain;
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
