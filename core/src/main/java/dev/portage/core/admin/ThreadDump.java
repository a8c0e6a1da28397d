package dev.portage.core.admin;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;

/**
 * A text dump of every live JVM thread, the JVM's counterpart of Go's goroutine dump, answered on
 * {@code /debug/pprof/goroutine} by every component that serves profiling routes. Stateless.
 */
public final class ThreadDump {

  private ThreadDump() {}

  /** Every live thread with its full stack and the lock it waits for, and that lock's owner. */
  public static String text() {
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
