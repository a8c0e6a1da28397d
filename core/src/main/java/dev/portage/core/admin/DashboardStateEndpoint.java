package dev.portage.core.admin;

import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Serves {@code /dashboard/state}: the component's name, the server's wall-clock time, the
 * sections its {@link DashboardSource} renders and, when the server has readiness checks, a
 * {@code Readiness} table. Renders afresh on every request, on the admin event loop; holds only
 * immutable configuration.
 */
final class DashboardStateEndpoint implements AdminHandler {

  static final String READINESS_SECTION = "Readiness";

  private final String component;
  private final DashboardSource source;
  private final Map<String, HealthCheck> readinessChecks;
  private final InstantSource wall;

  /**
   * @param component shown as the page's title, e.g. {@code tunnel-server}
   * @param source the component's state, or null for a server that registered none
   * @param readinessChecks the checks behind {@code /readyz}, in report order
   * @param wall the clock stamping each answer
   */
  DashboardStateEndpoint(
      String component,
      DashboardSource source,
      Map<String, HealthCheck> readinessChecks,
      InstantSource wall) {
    this.component = component;
    this.source = source;
    this.readinessChecks = new LinkedHashMap<>(readinessChecks);
    this.wall = wall;
  }

  @Override
  public AdminResponse handle(AdminRequest request) {
    DashboardView view = new DashboardView();
    if (source != null) {
      source.render(view);
    }
    if (!readinessChecks.isEmpty()) {
      DashboardView.Table table = view.table(READINESS_SECTION, "check", "ok", "reason");
      for (Map.Entry<String, HealthCheck> e : readinessChecks.entrySet()) {
        HealthCheck.Result result = HealthEndpoint.run(e.getValue());
        table.row(e.getKey(), result.healthy(), result.reason());
      }
    }
    Map<String, Object> state = new LinkedHashMap<>();
    state.put("component", component);
    state.put("time", wall.instant().toString());
    state.put("sections", view.sections());
    AdminResponse json = AdminResponse.json(200, JsonWriter.write(state));
    return new AdminResponse(json.status(), json.contentType(), json.body(),
        Map.of("Cache-Control", "no-store"));
  }
}
