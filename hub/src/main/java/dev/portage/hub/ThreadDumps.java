package dev.portage.hub;

import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import dev.portage.core.admin.ThreadDump;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The hub server's {@code /debug/pprof/} for {@code --profiling} (on by default, as in YurtHub):
 * the JVM's counterpart of Go's goroutine profile. {@code /debug/pprof/} lists what is there;
 * {@code /debug/pprof/goroutine} answers a text dump of every thread with its stack and the locks
 * it holds or waits for. Go's CPU and heap profiles have no counterpart here (use JFR). Stateless.
 */
final class ThreadDumps {

  static final String INDEX = "/debug/pprof/";
  static final String GOROUTINE = "/debug/pprof/goroutine";

  private ThreadDumps() {}

  /** Adds the two routes (GET only). */
  static void addRoutes(AdminServer.Builder server) {
    server.route(INDEX, req -> AdminResponse.text(200,
        "/debug/pprof/\n\ngoroutine: stack traces of every thread of the hub's JVM ("
            + GOROUTINE + ")\n"));
    server.route(GOROUTINE, req -> {
      if (!req.method().equals("GET")) {
        return new AdminResponse(405, "text/plain; charset=utf-8",
            "method not allowed (expected: GET)\n".getBytes(StandardCharsets.UTF_8),
            Map.of("Allow", "GET"));
      }
      return AdminResponse.text(200, ThreadDump.text());
    });
  }
}
