package dev.portage.control;

import dev.portage.control.rules.RuleTypeStatus;
import dev.portage.control.source.Kinds;
import dev.portage.control.store.KindSnapshot;
import dev.portage.core.admin.DashboardSource;
import dev.portage.core.admin.DashboardView;

/**
 * The control plane's live state for the admin dashboard: source and connections, then per dds
 * type its revision, subscribers and unacknowledged pushes, then per stored kind its objects and
 * revision. Reads the rule server, store and metrics on every render. Thread-safe.
 */
final class DashboardState implements DashboardSource {

  static final String COMPONENT = "control-plane";
  static final String SUMMARY = "Control plane";
  static final String RULE_TYPES = "dds rule types";
  static final String KINDS = "Stored kinds";

  private final ControlPlane plane;

  DashboardState(ControlPlane plane) {
    this.plane = plane;
  }

  @Override
  public void render(DashboardView view) {
    view.fields(SUMMARY)
        .put("source", plane.source().describe())
        .put("synced", plane.source().isSynced())
        .put("store revision", plane.store().revision())
        .put("grpc address", String.valueOf(plane.grpcAddress()))
        .put("dds connections", plane.ruleConnectionCount())
        .put("destination streams", plane.destinationStreamCount())
        .put("grpc connections", plane.grpcConnectionCount());
    DashboardView.Table types = view.table(RULE_TYPES,
        "type", "revision", "objects", "subscribers", "unacknowledged pushes", "pushes sent");
    for (RuleTypeStatus t : plane.ruleTypes()) {
      types.row(t.type(), t.revision(), t.objects(), t.subscribers(), t.unacknowledged(), t.pushes());
    }
    DashboardView.Table kinds = view.table(KINDS, "kind", "objects", "revision");
    for (String kind : Kinds.ALL) {
      KindSnapshot s = plane.store().list(kind);
      kinds.row(kind, s.items().size(), s.revision());
    }
  }
}
