package dev.portage.control.destination;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import java.io.UncheckedIOException;

/** Builds Kubernetes-shaped objects from YAML and puts them in a store, for tests (here and in the client tests). */
public final class Kube {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static int version;

  private Kube() {}

  public static JsonNode yaml(String text) {
    try {
      return YAML.readTree(text);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static synchronized void put(ResourceStore store, String yamlText) {
    store.put(SourceObject.of(yaml(yamlText), Integer.toString(++version)), 0);
  }

  public static void delete(ResourceStore store, String kind, String ns, String name) {
    store.delete(new ResourceKey(kind, ns, name), 0);
  }

  /** A ClusterIP Service with one named port {@code http} 80 → 8080. */
  public static String service(String ns, String name) {
    return """
        apiVersion: v1
        kind: Service
        metadata: {namespace: %s, name: %s}
        spec:
          ports:
          - {name: http, port: 80, targetPort: 8080, protocol: TCP}
        """.formatted(ns, name);
  }

  /**
   * An EndpointSlice of service {@code svc} with port {@code http} 8080 and the given endpoints, each
   * "ip" (ready) or "ip!" (not ready).
   */
  public static String slice(String ns, String name, String svc, String... endpoints) {
    StringBuilder eps = new StringBuilder();
    for (String e : endpoints) {
      boolean ready = !e.endsWith("!");
      String ip = ready ? e : e.substring(0, e.length() - 1);
      String pod = "pod-" + ip.replace('.', '-').replace(':', '-');
      eps.append("- addresses: [\"").append(ip).append("\"]\n")
          .append("  conditions: {ready: ").append(ready).append("}\n")
          .append("  targetRef: {kind: Pod, namespace: ").append(ns).append(", name: ").append(pod).append("}\n");
    }
    return """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata:
          namespace: %s
          name: %s
          labels: {kubernetes.io/service-name: %s}
        addressType: IPv4
        ports:
        - {name: http, port: 8080, protocol: TCP}
        endpoints:
        %s
        """.formatted(ns, name, svc, eps.length() == 0 ? "[]" : eps.toString().strip());
  }
}
