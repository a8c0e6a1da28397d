package dev.portage.hub;

import dev.portage.core.admin.AdminResponse;
import dev.portage.core.admin.AdminServer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
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
      return AdminResponse.text(200, dump());
    });
  }

  /** Every live thread with its full stack, monitors and ownable synchronizers. */
  static String dump() {
    StringBuilder out = new StringBuilder();
    ThreadInfo[] threads = ManagementFactory.getThreadMXBean().dumpAllThreads(true, true);
    out.append(threads.length).append(" threads\n\n");
    for (ThreadInfo t : threads) {
      out.append('"').append(t.getThreadName()).append("\" #").append(t.getThreadId())
          .append(t.isDaemon() ? " daemon" : "").append(' ').append(t.getThreadState());
      if (t.getLockName() != null) {
        out.append(" on ").append(t.getLockName());
      }
      if (t.getLockOwnerName() != null) {
        out.append(" owned by \"").append(t.getLockOwnerName()).append('"');
      }
      out.append('\n');
      // ThreadInfo.toString() stops after 8 frames; the whole stack is what one reads a dump for.
      for (StackTraceElement frame : t.getStackTrace()) {
        out.append("\tat ").append(frame).append('\n');
      }
      out.append('\n');
    }
    return out.toString();
  }
}
