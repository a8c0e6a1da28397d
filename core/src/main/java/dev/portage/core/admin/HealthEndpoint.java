package dev.portage.core.admin;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Serves {@code /healthz}, {@code /livez} or {@code /readyz} the Kubernetes way: {@code ok} when
 * every check passes; otherwise 503 with one {@code [-]<name> failed: <reason>} line per failing
 * check. {@code ?verbose} lists every check; {@code ?exclude=<name>} (repeatable) skips one.
 * Stateless apart from its immutable check map; runs on the caller's thread.
 */
final class HealthEndpoint implements AdminHandler {

  private final String name;
  private final Map<String, HealthCheck> checks;

  /**
   * @param name the endpoint name used in the summary line, e.g. {@code readyz}
   * @param checks checks in the order they are reported
   */
  HealthEndpoint(String name, Map<String, HealthCheck> checks) {
    this.name = name;
    this.checks = new LinkedHashMap<>(checks);
  }

  @Override
  public AdminResponse handle(AdminRequest request) {
    Set<String> excluded = new HashSet<>(request.parameters("exclude"));
    List<String> passed = new ArrayList<>();
    List<String> failed = new ArrayList<>();
    List<String> all = new ArrayList<>();
    for (Map.Entry<String, HealthCheck> entry : checks.entrySet()) {
      String check = entry.getKey();
      if (excluded.contains(check)) {
        continue;
      }
      HealthCheck.Result result = run(entry.getValue());
      String line =
          result.healthy() ? "[+]" + check + " ok" : "[-]" + check + " failed: " + result.reason();
      (result.healthy() ? passed : failed).add(line);
      all.add(line);
    }
    boolean healthy = failed.isEmpty();
    boolean verbose = request.hasParameter("verbose");
    if (healthy && !verbose) {
      return AdminResponse.text(200, "ok");
    }
    StringBuilder body = new StringBuilder();
    for (String line : verbose ? all : failed) {
      body.append(line).append('\n');
    }
    body.append(name).append(healthy ? " check passed\n" : " check failed\n");
    return AdminResponse.text(healthy ? 200 : 503, body.toString());
  }

  static HealthCheck.Result run(HealthCheck check) {
    try {
      HealthCheck.Result result = check.check();
      return result != null ? result : HealthCheck.Result.failed("check returned null");
    } catch (RuntimeException e) {
      // A broken check must read as unhealthy, not take the probe endpoint down.
      String message = e.getMessage();
      return HealthCheck.Result.failed(message != null ? message : e.getClass().getName());
    }
  }
}
