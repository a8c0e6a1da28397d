package dev.portage.bench.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The control plane's manifest directory and its churn. Three Services on port 8080: {@code soak-web}
 * and {@code soak-alt}, each backed by a non-empty, changing subset of the demo backends (one
 * EndpointSlice file each), and the apex {@code soak-split} whose ServiceProfile splits it over the
 * two with changing weights; {@code soak-web}'s profile changes its route timeout and retryability;
 * a Dubbo TagRoute changes its addresses. Files are replaced atomically (written to a dot file, then
 * renamed), as the file source ignores dot files. Thread-safe: the churn timer and the main thread's
 * final pin are serialised.
 */
final class Manifests {
  static final String DOMAIN = ".default.svc.cluster.local:8080";
  static final String WEB = "soak-web";
  static final String ALT = "soak-alt";
  static final String SPLIT = "soak-split";

  private final Path dir;
  private final List<String> backendAddresses;
  private final int backendPort;
  private final SplittableRandom random;
  private long changes;
  private List<String> webSet;

  Manifests(Path dir, List<String> backendAddresses, int backendPort, long seed) {
    this.dir = dir;
    this.backendAddresses = List.copyOf(backendAddresses);
    this.backendPort = backendPort;
    this.random = new SplittableRandom(seed);
  }

  /** Writes the initial state: every backend in both services, even split, lenient routes. */
  synchronized void writeInitial() throws IOException {
    Files.createDirectories(dir);
    write("services.yaml", services());
    write("soak-web-slice.yaml", slice(WEB, backendAddresses));
    webSet = backendAddresses;
    write("soak-alt-slice.yaml", slice(ALT, backendAddresses));
    write("profiles.yaml", profiles("10s", true, 50, 50));
    write("rules.yaml", tagRoute(backendAddresses.subList(0, 1)));
  }

  /** Applies one random change and returns a one-line description of it. */
  synchronized String churn() throws IOException {
    changes++;
    switch (random.nextInt(4)) {
      case 0 -> {
        List<String> subset = subset();
        write("soak-web-slice.yaml", slice(WEB, subset));
        webSet = subset;
        return WEB + " endpoints " + subset;
      }
      case 1 -> {
        List<String> subset = subset();
        write("soak-alt-slice.yaml", slice(ALT, subset));
        return ALT + " endpoints " + subset;
      }
      case 2 -> {
        String timeout = random.nextBoolean() ? "10s" : "15s";
        boolean retryable = random.nextBoolean();
        int w = 1 + random.nextInt(99);
        write("profiles.yaml", profiles(timeout, retryable, w, 100 - w));
        return "profiles: timeout " + timeout + ", retryable " + retryable + ", split " + w + "/" + (100 - w);
      }
      default -> {
        List<String> subset = subset();
        write("rules.yaml", tagRoute(subset));
        return "TagRoute addresses " + subset;
      }
    }
  }

  /**
   * Makes one backend the only endpoint of {@code soak-web} (the convergence check) and returns it:
   * one outside the current set when there is one, so that proxies can only reach it by following
   * this change.
   */
  synchronized String pinWeb() throws IOException {
    String pinned = backendAddresses.stream().filter(a -> !webSet.contains(a)).findFirst()
        .orElse(backendAddresses.get(random.nextInt(backendAddresses.size())));
    changes++;
    write("soak-web-slice.yaml", slice(WEB, List.of(pinned)));
    webSet = List.of(pinned);
    return pinned;
  }

  synchronized long changes() {
    return changes;
  }

  /** A random non-empty subset of the backends, in their order. */
  private List<String> subset() {
    List<String> out = new ArrayList<>();
    while (out.isEmpty()) {
      for (String a : backendAddresses) {
        if (random.nextBoolean()) {
          out.add(a);
        }
      }
    }
    return out;
  }

  private void write(String name, String text) throws IOException {
    Path tmp = dir.resolve("." + name + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private String services() {
    List<String> docs = new ArrayList<>();
    for (String name : List.of(WEB, ALT, SPLIT)) {
      docs.add("""
          apiVersion: v1
          kind: Service
          metadata: {name: %s, namespace: default}
          spec:
            ports:
              - {name: http, protocol: TCP, port: 8080%s}
          """.formatted(name, name.equals(SPLIT) ? "" : ", targetPort: " + backendPort));
    }
    return String.join("---\n", docs);
  }

  private String slice(String service, List<String> addresses) {
    StringBuilder eps = new StringBuilder();
    for (String a : addresses) {
      eps.append("  - addresses: [\"").append(a).append("\"]\n    conditions: {ready: true}\n");
    }
    return """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata:
          name: %s-1
          namespace: default
          labels: {kubernetes.io/service-name: %s}
        addressType: IPv4
        endpoints:
        %sports:
          - {name: http, protocol: TCP, port: %d}
        """.formatted(service, service, eps, backendPort);
  }

  private static String profiles(String timeout, boolean retryable, int webWeight, int altWeight) {
    return """
        apiVersion: linkerd.io/v1alpha2
        kind: ServiceProfile
        metadata: {name: soak-web.default.svc.cluster.local, namespace: default}
        spec:
          routes:
            - name: GET /api/{seed}
              condition: {method: GET, pathRegex: /api/.*}
              responseClasses:
                - condition: {status: {min: 500, max: 599}}
                  isFailure: true
              isRetryable: %s
              timeout: %s
          retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 10, ttl: 10s}
        ---
        apiVersion: linkerd.io/v1alpha2
        kind: ServiceProfile
        metadata: {name: soak-split.default.svc.cluster.local, namespace: default}
        spec:
          routes:
            - name: GET /api/{seed}
              condition: {method: GET, pathRegex: /api/.*}
              timeout: %s
          dstOverrides:
            - {authority: "soak-web%s", weight: %d}
            - {authority: "soak-alt%s", weight: %d}
        """.formatted(retryable, timeout, timeout, DOMAIN, webWeight, DOMAIN, altWeight);
  }

  private static String tagRoute(List<String> addresses) {
    StringBuilder list = new StringBuilder();
    for (String a : addresses) {
      list.append(list.isEmpty() ? "" : ", ").append('"').append(a).append(":20880\"");
    }
    return """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata: {name: soak-provider.tag-router, namespace: default}
        spec:
          configVersion: v3.0
          key: soak-provider
          enabled: true
          force: false
          runtime: true
          priority: 1
          tags:
            - name: gray
              addresses: [%s]
              match:
                - key: env
                  value: {exact: gray}
        """.formatted(list);
  }
}
