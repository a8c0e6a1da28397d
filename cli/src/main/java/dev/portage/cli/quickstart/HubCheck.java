package dev.portage.cli.quickstart;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The quickstart's check of the edge hub, with the real fabric8 client pointed at the hub: reads
 * answered by the API server while it is online, the same reads answered from the hub's cache while
 * it is offline, and, once it is back, a create that only the API server can answer (the cache never
 * had the object). Leaves the API server online. Runs on the caller's thread; blocking.
 */
final class HubCheck {

  /** Waits until a condition holds or fails with a message naming what was awaited. */
  @FunctionalInterface
  interface Awaiter {
    void await(String what, BooleanSupplier condition, Duration timeout) throws Exception;
  }

  /** The pod the last step creates and deletes through the hub. */
  static final String CHECK_POD = "quickstart-check";

  private final MockApiServer api;
  private final BooleanSupplier hubSeesApiServer;
  private final String hubUrl;
  private final Awaiter awaiter;

  /**
   * @param hubSeesApiServer whether the hub's health checks pass for the API server now
   * @param hubUrl the hub's plain proxy URL
   */
  HubCheck(MockApiServer api, BooleanSupplier hubSeesApiServer, String hubUrl, Awaiter awaiter) {
    this.api = api;
    this.hubSeesApiServer = hubSeesApiServer;
    this.hubUrl = hubUrl;
    this.awaiter = awaiter;
  }

  /** A kubeconfig for kubectl pointed at the hub, namespace {@value MockApiServer#NAMESPACE}. */
  static String kubeconfig(String hubUrl) {
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: portage-hub
          cluster:
            server: %s
        contexts:
        - name: portage-hub
          context:
            cluster: portage-hub
            user: quickstart
            namespace: %s
        current-context: portage-hub
        users:
        - name: quickstart
          user:
            token: quickstart-token
        """.formatted(hubUrl, MockApiServer.NAMESPACE);
  }

  /** Runs the three steps, printing a PASS/FAIL line for each; true if all passed. */
  boolean run(PrintWriter out) {
    boolean ok;
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
        .withMasterUrl(hubUrl).withNamespace(MockApiServer.NAMESPACE).withOauthToken("quickstart-token")
        .withRequestRetryBackoffLimit(0).withConnectionTimeout(5_000).withRequestTimeout(10_000)
        .build()).build()) {
      ok = step(out, "edge hub online -> API server: list pods -A, get demo/web-0", () -> {
        int pods = client.pods().inAnyNamespace().list().getItems().size();
        Pod web0 = client.pods().withName("web-0").get();
        return web0 != null && pods >= MockApiServer.PODS.size()
            ? pods + " pods, web-0 found" : null;
      });
      api.offline();
      ok &= step(out, "edge hub, API server offline -> cache: list pods -A, get demo/web-0", () -> {
        List<String> names = client.pods().inAnyNamespace().list().getItems().stream()
            .map(p -> p.getMetadata().getName()).toList();
        Pod web0 = client.pods().withName("web-0").get();
        return web0 != null && names.containsAll(MockApiServer.PODS)
            ? names.size() + " pods and web-0 from the cache" : null;
      });
      api.online();
      ok &= step(out, "edge hub, API server online again -> API server: create, get, delete "
          + CHECK_POD, () -> {
            awaiter.await("the hub to see the API server healthy again", hubSeesApiServer,
                Duration.ofSeconds(15));
            client.pods().resource(MockApiServer.pod(CHECK_POD, "check")).create();
            Pod created = client.pods().withName(CHECK_POD).get();
            client.pods().withName(CHECK_POD).delete();
            return created != null ? CHECK_POD + " created and read back through the hub" : null;
          });
    } finally {
      api.online();
    }
    return ok;
  }

  @FunctionalInterface
  private interface Step {
    /** What passed, or null if the step failed without an exception. */
    String run() throws Exception;
  }

  private static boolean step(PrintWriter out, String what, Step step) {
    String result;
    try {
      result = step.run();
    } catch (Exception e) {
      out.printf("FAIL  %s: %s%n", what, e);
      return false;
    }
    out.printf("%s  %s: %s%n", result != null ? "PASS" : "FAIL", what,
        result != null ? result : "unexpected answer");
    return result != null;
  }
}
