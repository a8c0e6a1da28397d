package dev.portage.bench.tunnel;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;

/**
 * Context switches (voluntary + involuntary, summed over every thread) and CPU time (user + system)
 * of a set of processes, read from {@code /proc}: how many times the relays woke up and how much CPU
 * they used for a batch of dials, a figure that load on a shared box does not distort the way it
 * distorts latency. All zero where {@code /proc} is missing. Immutable.
 *
 * @param switches context switches of all threads of the processes
 * @param cpuTicks user + system time in clock ticks (usually 100 per second)
 * @param jitTicks the part of {@code cpuTicks} spent by JIT compiler threads (a JVM still warming up)
 */
record ProcCounters(long switches, long cpuTicks, long jitTicks) {
  static final ProcCounters ZERO = new ProcCounters(0, 0, 0);
  /** Clock ticks per second of {@code /proc/<pid>/stat}; 100 on every Linux the bench runs on. */
  static final int TICKS_PER_SECOND = 100;

  static ProcCounters of(Collection<Long> pids) {
    long switches = 0;
    long ticks = 0;
    long jit = 0;
    for (long pid : pids) {
      Path proc = Path.of("/proc", Long.toString(pid));
      try (DirectoryStream<Path> tasks = Files.newDirectoryStream(proc.resolve("task"))) {
        for (Path task : tasks) {
          switches += switches(task.resolve("status"));
          try {
            String comm = Files.readString(task.resolve("comm"));
            if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
              jit += cpuTicks(task.resolve("stat"));
            }
          } catch (IOException | RuntimeException e) {
            // the thread ended between listing and reading
          }
        }
        ticks += cpuTicks(proc.resolve("stat"));
      } catch (IOException | RuntimeException e) {
        // the process ended, or not Linux: counts what could be read
      }
    }
    return new ProcCounters(switches, ticks, jit);
  }

  ProcCounters plus(ProcCounters o) {
    return new ProcCounters(switches + o.switches, cpuTicks + o.cpuTicks, jitTicks + o.jitTicks);
  }

  ProcCounters minus(ProcCounters o) {
    return new ProcCounters(switches - o.switches, cpuTicks - o.cpuTicks, jitTicks - o.jitTicks);
  }

  private static long switches(Path status) {
    long n = 0;
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
          n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      // the thread ended between listing and reading
    }
    return n;
  }

  /** utime + stime: fields 14 and 15 of /proc/<pid>/stat, counted after the ")" that ends the name. */
  private static long cpuTicks(Path stat) throws IOException {
    String s = Files.readString(stat);
    String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
