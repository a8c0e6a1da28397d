package dev.portage.bench.tunnel;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * CPU time of the harness (the client) and of some child JVMs across one measurement, reported as
 * CPU-seconds per GiB moved. Created just before the measurement; used from the harness's main thread.
 */
final class CpuMeter {
  static final String HEADER = "client, server, agent, backend CPU-s/GiB (sum)";
  private static final String[] ORDER = {"server", "agent", "backend"};

  private final Map<String, ChildJvm> jvms;
  private final Map<String, Double> before = new LinkedHashMap<>();
  private final double clientBefore;

  CpuMeter(Map<String, ChildJvm> jvms) {
    this.jvms = jvms;
    for (Map.Entry<String, ChildJvm> e : jvms.entrySet()) {
      before.put(e.getKey(), e.getValue().cpuSeconds());
    }
    clientBefore = ChildJvm.cpuSeconds(ProcessHandle.current().pid());
  }

  /** Per-JVM CPU-seconds per GiB since construction, "client, server, agent, backend (sum)"; "–" if absent. */
  String perGib(long bytes) {
    double gib = bytes / (double) (1L << 30);
    double client = (ChildJvm.cpuSeconds(ProcessHandle.current().pid()) - clientBefore) / gib;
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%.2f", client));
    double sum = client;
    for (String name : ORDER) {
      ChildJvm jvm = jvms.get(name);
      if (jvm == null) {
        sb.append(", –");
        continue;
      }
      double v = (jvm.cpuSeconds() - before.get(name)) / gib;
      sum += v;
      sb.append(String.format(Locale.ROOT, ", %.2f", v));
    }
    return sb.append(String.format(Locale.ROOT, " (%.2f)", sum)).toString();
  }
}
