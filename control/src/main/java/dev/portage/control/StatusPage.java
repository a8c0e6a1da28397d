package dev.portage.control;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.control.source.Kinds;
import dev.portage.control.store.KindSnapshot;
import dev.portage.core.admin.AdminHandler;
import dev.portage.core.admin.AdminRequest;
import dev.portage.core.admin.AdminResponse;
import java.util.Map;

/**
 * {@code GET /status} of the admin listener: a read-only JSON view of the live control plane —
 * source and readiness, store revision, objects and revision per kind, open rule connections,
 * destination streams and gRPC connections. Runs on the admin event loop; reads only counters and
 * the store's short-locked snapshots. Thread-safe.
 */
final class StatusPage implements AdminHandler {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ControlPlane plane;

  StatusPage(ControlPlane plane) {
    this.plane = plane;
  }

  @Override
  public AdminResponse handle(AdminRequest request) throws Exception {
    if (!"GET".equals(request.method()) && !"HEAD".equals(request.method())) {
      AdminResponse refused = AdminResponse.text(405, "method not allowed: " + request.method() + "\n");
      return new AdminResponse(refused.status(), refused.contentType(), refused.body(), Map.of("Allow", "GET, HEAD"));
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("source", plane.source().describe());
    root.put("synced", plane.source().isSynced());
    root.put("grpcAddress", String.valueOf(plane.grpcAddress()));
    root.put("tls", plane.config().tls());
    root.put("storeRevision", plane.store().revision());
    ObjectNode kinds = root.putObject("kinds");
    for (String kind : Kinds.ALL) {
      KindSnapshot s = plane.store().list(kind);
      kinds.putObject(kind).put("objects", s.items().size()).put("revision", s.revision());
    }
    root.put("ruleConnections", plane.ruleConnectionCount());
    root.put("destinationStreams", plane.destinationStreamCount());
    root.put("grpcConnections", plane.grpcConnectionCount());
    return AdminResponse.json(200, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
  }
}
