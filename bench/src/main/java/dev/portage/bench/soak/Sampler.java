package dev.portage.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Every few seconds (driven by the harness's scheduler): one {@link ProcSample} per live component
 * into its {@link ResourceSeries}, the 1-minute load average, and a check for components that died
 * without being killed (a crash: reported with the tail of its log). Called from one scheduler
 * thread; the getters may be read from any thread.
 */
final class Sampler {
  /** A component that exited on its own. */
  record Crash(long atNanos, String component, int exitCode, List<String> logTail) {}

  private final List<Component> components;
  private final SoakClock clock;
  private final PrintStream log;
  private final List<Crash> crashes = new ArrayList<>();
  private double maxLoad;

  Sampler(List<Component> components, SoakClock clock, PrintStream log) {
    this.components = List.copyOf(components);
    this.clock = clock;
    this.log = log;
  }

  void sample() {
    long now = clock.now();
    for (Component c : components) {
      Integer exit = c.unexpectedExit();
      if (exit != null) {
        List<String> tail = tail(c.log(), 30);
        synchronized (this) {
          crashes.add(new Crash(now, c.name, exit, tail));
        }
        log.printf("soak: %s CRASH: %s exited with %d on its own; log %s%n", SoakClock.format(now),
            c.name, exit, c.log());
        continue;
      }
      long pid = c.pid();
      if (pid > 0 && c.alive()) {
        ProcSample s = ProcSample.read(pid, now);
        if (s != null) {
          c.series().add(s);
        }
      }
    }
    double load = loadAverage()[0];
    synchronized (this) {
      maxLoad = Math.max(maxLoad, load);
    }
  }

  /** One final sample per component after the load stopped, for the open-fd comparison. */
  void settled() {
    long now = clock.now();
    for (Component c : components) {
      if (c.alive()) {
        ProcSample s = ProcSample.read(c.pid(), now);
        if (s != null) {
          c.series().settled(s);
        }
      }
    }
  }

  synchronized List<Crash> crashes() {
    return List.copyOf(crashes);
  }

  synchronized double maxLoad() {
    return maxLoad;
  }

  /** 1, 5 and 15-minute load averages from /proc/loadavg; zeros where it cannot be read. */
  static double[] loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
    } catch (IOException | RuntimeException e) {
      return new double[3];
    }
  }

  static List<String> tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file);
      return List.copyOf(all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return List.of("(log unreadable: " + e + ")");
    }
  }
}
