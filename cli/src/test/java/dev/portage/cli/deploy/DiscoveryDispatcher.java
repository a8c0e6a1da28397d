package dev.portage.cli.deploy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Answers the API discovery requests kubectl makes ({@code /api}, {@code /apis}, each group version's
 * resource list) for a fixed set of kinds, and 404 NotFound for every object GET, so
 * {@code kubectl apply --dry-run=client} maps each document to a resource and reports it "created".
 * Requests are recorded. Threading: called on the mock server's threads; the log is synchronised.
 */
final class DiscoveryDispatcher extends Dispatcher {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A kind the fake API server serves. */
  record Kind(String group, String version, String kind, String plural, boolean namespaced) {
    String groupVersion() {
      return group.isEmpty() ? version : group + "/" + version;
    }
  }

  /** The built-in kinds deploy/ uses (facts of the Kubernetes API, v1.30+). */
  static final List<Kind> BUILTIN = List.of(
      new Kind("", "v1", "ServiceAccount", "serviceaccounts", true),
      new Kind("", "v1", "Service", "services", true),
      new Kind("", "v1", "Pod", "pods", true),
      new Kind("", "v1", "ConfigMap", "configmaps", true),
      new Kind("", "v1", "Secret", "secrets", true),
      new Kind("", "v1", "Namespace", "namespaces", false),
      new Kind("apps", "v1", "Deployment", "deployments", true),
      new Kind("apps", "v1", "DaemonSet", "daemonsets", true),
      new Kind("apps", "v1", "StatefulSet", "statefulsets", true),
      new Kind("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
      new Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true),
      new Kind("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
      new Kind("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false),
      new Kind("coordination.k8s.io", "v1", "Lease", "leases", true),
      new Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false));

  private final Map<String, String> bodies = new LinkedHashMap<>();
  private final List<String> requests = Collections.synchronizedList(new ArrayList<>());

  DiscoveryDispatcher(List<Kind> kinds) {
    Map<String, List<Kind>> byGroupVersion = new LinkedHashMap<>();
    for (Kind k : kinds) {
      byGroupVersion.computeIfAbsent(k.groupVersion(), gv -> new ArrayList<>()).add(k);
    }
    ObjectNode api = JSON.createObjectNode().put("kind", "APIVersions");
    api.putArray("versions").add("v1");
    api.putArray("serverAddressByClientCIDRs").addObject().put("clientCIDR", "0.0.0.0/0").put("serverAddress", "127.0.0.1");
    bodies.put("/api", api.toString());
    ObjectNode groups = JSON.createObjectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
    ArrayNode groupList = groups.putArray("groups");
    for (Map.Entry<String, List<Kind>> e : byGroupVersion.entrySet()) {
      Kind first = e.getValue().get(0);
      ObjectNode resources = JSON.createObjectNode().put("kind", "APIResourceList").put("apiVersion", "v1")
          .put("groupVersion", e.getKey());
      ArrayNode list = resources.putArray("resources");
      for (Kind k : e.getValue()) {
        ObjectNode r = list.addObject().put("name", k.plural()).put("singularName", k.kind().toLowerCase())
            .put("namespaced", k.namespaced()).put("kind", k.kind());
        r.putArray("verbs").add("create").add("delete").add("get").add("list").add("patch").add("update").add("watch");
      }
      bodies.put(first.group().isEmpty() ? "/api/v1" : "/apis/" + e.getKey(), resources.toString());
      if (!first.group().isEmpty()) {
        ObjectNode g = groupList.addObject().put("name", first.group());
        ObjectNode version = JSON.createObjectNode().put("groupVersion", e.getKey()).put("version", first.version());
        g.putArray("versions").add(version);
        g.set("preferredVersion", version);
      }
    }
    bodies.put("/apis", groups.toString());
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    String path = request.getPath();
    int query = path.indexOf('?');
    String bare = query < 0 ? path : path.substring(0, query);
    requests.add(request.getMethod() + " " + bare);
    String body = bodies.get(bare);
    if (body != null && request.getMethod().equals("GET")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(body);
    }
    if (request.getMethod().equals("GET")) {
      return new MockResponse().setResponseCode(404).setHeader("Content-Type", "application/json")
          .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404,"
              + "\"message\":\"not found\"}");
    }
    return new MockResponse().setResponseCode(405).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"MethodNotAllowed\",\"code\":405}");
  }

  List<String> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }
}
