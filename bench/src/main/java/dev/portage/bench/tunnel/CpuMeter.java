package dev.portage.bench.tunnel;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * CPU time of the client (the harness, or the grpc-go client process) and of some child JVMs across
 * one measurement, reported as
 * CPU-seconds per GiB moved, with the share of the relays' JIT compiler threads (a relay still
 * compiling measures warm-up, not the data path). Relays that are not JVMs ({@code ssh -L}'s ssh client
 * in the server's column, sshd's session processes in the agent's) are counted from their pids.
 * Created just before the measurement; used from the harness's main thread.
 */
final class CpuMeter {
  static final String HEADER = "client, server, agent, backend CPU-s/GiB (sum) | of which server + agent JIT";
  private static final String[] ORDER = {"server", "agent", "backend"};

  private final Map<String, ChildJvm> jvms;
  private final Map<String, List<Long>> processes;
  private final long clientPid;
  private final Map<String, Double> before = new LinkedHashMap<>();
  private final double clientBefore;
  private final double jitBefore;

  /** {@code clientPid}: the client's process (the harness, or the grpc-go client). */
  CpuMeter(long clientPid, Map<String, ChildJvm> jvms) {
    this(clientPid, jvms, Map.of());
  }

  /** As above, with relays that are plain processes: column name ("server", "agent") to their pids. */
  CpuMeter(long clientPid, Map<String, ChildJvm> jvms, Map<String, List<Long>> processes) {
    this.clientPid = clientPid;
    this.jvms = jvms;
    this.processes = processes;
    for (Map.Entry<String, ChildJvm> e : jvms.entrySet()) {
      before.put(e.getKey(), e.getValue().cpuSeconds());
    }
    for (Map.Entry<String, List<Long>> e : processes.entrySet()) {
      before.put(e.getKey(), cpuSeconds(e.getValue()));
    }
    clientBefore = ChildJvm.cpuSeconds(clientPid);
    jitBefore = relayJit();
  }

  private double relayJit() {
    double sum = 0;
    for (String name : new String[] {"server", "agent"}) {
      ChildJvm jvm = jvms.get(name);
      sum += jvm == null ? 0 : jvm.jitCpuSeconds();
    }
    return sum;
  }

  /** Per-JVM CPU-seconds per GiB since construction, as table cells under {@link #HEADER}; "–" if absent. */
  String perGib(long bytes) {
    double gib = bytes / (double) (1L << 30);
    double client = (ChildJvm.cpuSeconds(clientPid) - clientBefore) / gib;
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%.2f", client));
    double sum = client;
    for (String name : ORDER) {
      ChildJvm jvm = jvms.get(name);
      List<Long> pids = processes.get(name);
      if (jvm == null && pids == null) {
        sb.append(", –");
        continue;
      }
      double now = jvm != null ? jvm.cpuSeconds() : cpuSeconds(pids);
      double v = (now - before.get(name)) / gib;
      sum += v;
      sb.append(String.format(Locale.ROOT, ", %.2f", v));
    }
    sb.append(String.format(Locale.ROOT, " (%.2f)", sum));
    if (jvms.containsKey("server")) {
      sb.append(String.format(Locale.ROOT, " | %.2f", (relayJit() - jitBefore) / gib));
    } else {
      sb.append(" | –");
    }
    return sb.toString();
  }

  private static double cpuSeconds(List<Long> pids) {
    double sum = 0;
    for (long pid : pids) {
      double v = ChildJvm.cpuSeconds(pid);
      sum += Double.isNaN(v) ? 0 : v; // an sshd child that is gone by now took its CPU with it
    }
    return sum;
  }
}
