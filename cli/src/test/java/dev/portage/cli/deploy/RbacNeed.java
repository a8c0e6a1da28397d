package dev.portage.cli.deploy;

import dev.portage.control.source.Kinds;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * One API permission a component needs because of its flags: verb on group/resource, in one
 * namespace or (namespace null) cluster-wide. The table mirrors what the code calls: the tunnel
 * server's LeaseController and TokenReviews, the agent's LeaseCounter, the control plane's informers
 * (every kind in {@link Kinds#ALL}) and the service proxy's Service/EndpointSlice informers.
 */
record RbacNeed(String group, String resource, String verb, String namespace, String reason) {

  String describe() {
    return verb + " " + (group.isEmpty() ? "" : group + "/") + resource
        + (namespace == null ? " in every namespace" : " in namespace " + namespace);
  }

  /**
   * Needs of one container.
   *
   * @param flag the parsed value of an option of the subcommand (null when unset)
   * @param plural the resource (plural) of an {@code apiVersion/Kind} string, null when neither
   *     built in nor a CRD in deploy/crds
   */
  static List<RbacNeed> of(String subcommand, Function<String, Object> flag, Function<String, String> plural,
      List<String> problems, String where) {
    List<RbacNeed> needs = new ArrayList<>();
    boolean inCluster = flag.apply("--kubeconfig") == null; // a kubeconfig brings its own credentials
    switch (subcommand) {
      case "server" -> {
        if (Boolean.TRUE.equals(flag.apply("--enable-lease-controller")) && inCluster) {
          String ns = (String) flag.apply("--lease-namespace");
          for (String verb : List.of("get", "list", "create", "update", "delete")) {
            needs.add(new RbacNeed("coordination.k8s.io", "leases", verb, ns, "--enable-lease-controller"));
          }
        }
        if (flag.apply("--agent-namespace") != null && inCluster) {
          needs.add(new RbacNeed("authentication.k8s.io", "tokenreviews", "create", null, "--agent-namespace (token auth)"));
        }
      }
      case "agent" -> {
        if (Boolean.TRUE.equals(flag.apply("--count-server-leases")) && inCluster) {
          needs.add(new RbacNeed("coordination.k8s.io", "leases", "list", (String) flag.apply("--lease-namespace"),
              "--count-server-leases"));
        }
      }
      case "control-plane" -> {
        if ("kubernetes".equals(flag.apply("--source")) && inCluster) {
          for (String kind : Kinds.ALL) {
            String resource = plural.apply(kind);
            if (resource == null) {
              problems.add(where + ": --source=kubernetes watches " + kind
                  + ", which is neither built in nor a CRD in deploy/crds");
              continue;
            }
            String group = kind.chars().filter(c -> c == '/').count() == 2 ? kind.substring(0, kind.indexOf('/')) : "";
            for (String verb : List.of("list", "watch")) {
              needs.add(new RbacNeed(group, resource, verb, null, "--source=kubernetes (informer on " + kind + ")"));
            }
          }
          if (Boolean.TRUE.equals(flag.apply("--require-auth"))) {
            needs.add(new RbacNeed("authentication.k8s.io", "tokenreviews", "create", null, "--require-auth"));
          }
        }
      }
      case "service-proxy" -> {
        if (Boolean.TRUE.equals(flag.apply("--kubernetes"))) {
          for (String verb : List.of("list", "watch")) {
            needs.add(new RbacNeed("", "services", verb, null, "--kubernetes"));
            needs.add(new RbacNeed("discovery.k8s.io", "endpointslices", verb, null, "--kubernetes"));
          }
        }
      }
      default -> {
        // sidecar, hub, quickstart: no API server calls with the pod's own service account
      }
    }
    return needs;
  }
}
