package dev.portage.bench.tunnel;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link BenchChild} in its own JVM (same java, same class path): waits for its {@code ready} line,
 * reads values it announces, asks for its heap, reports its resident set size. Closing it closes its
 * stdin, which ends it. Used from the harness's main thread only.
 */
final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final BufferedReader out;
  private final OutputStream in;

  ChildJvm(Path logDir, String heap, String... args) throws IOException {
    // "server http-connect tls=/tmp/x" is named server-http-connect-tls (logs, {name} in the options)
    String name = String.join("-", java.util.Arrays.stream(args)
        .map(a -> a.contains("=") ? a.substring(0, a.indexOf('=')) : a).toList());
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx" + heap, "-XX:+UseG1GC",
        "--enable-native-access=ALL-UNNAMED"));
    // Extra options for the child JVMs (a profiler, GC logging), space separated.
    String extra = System.getenv("TUNNEL_BENCH_CHILD_OPTS");
    if (extra != null && !extra.isBlank()) {
      for (String o : extra.trim().split("\\s+")) {
        cmd.add(o.replace("{name}", name));
      }
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchChild.class.getName()));
    cmd.addAll(List.of(args));
    Files.createDirectories(logDir);
    Path log = logDir.resolve(name + ".log");
    process = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    in = process.getOutputStream();
  }

  long pid() {
    return process.pid();
  }

  /** Reads announcements up to {@code key} and returns its value. */
  long await(String key) throws IOException {
    for (String line; (line = out.readLine()) != null; ) {
      String[] parts = line.split(" ");
      if (parts.length == 3 && parts[0].equals("@@") && parts[1].equals(key)) {
        return Long.parseLong(parts[2]);
      }
    }
    throw new IOException("child " + process.pid() + " exited before announcing " + key);
  }

  /** Heap in use after a full GC, in bytes. */
  long heapAfterGc() throws IOException {
    in.write("heap\n".getBytes(StandardCharsets.US_ASCII));
    in.flush();
    return await("heap");
  }

  /** Resident set size from /proc, in bytes; -1 where /proc is not available. */
  long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux
    }
    return -1;
  }

  /** CPU time (user + system) of the child so far, in seconds; NaN where /proc is not available. */
  double cpuSeconds() {
    return cpuSeconds(process.pid());
  }

  /**
   * CPU time (user + system) of process {@code pid} so far, in seconds, from {@code /proc/<pid>/stat}
   * (fields 14 and 15, in clock ticks of 1/100 s); NaN where /proc is not available.
   */
  static double cpuSeconds(long pid) {
    try {
      return cpuSecondsOf(Path.of("/proc", Long.toString(pid), "stat"));
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** CPU time of the child's JIT compiler threads (C1, C2) so far, in seconds; NaN without /proc. */
  double jitCpuSeconds() {
    double sum = 0;
    try (var tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
      for (Path task : tasks.toList()) {
        String comm = Files.readString(task.resolve("comm"));
        if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
          sum += cpuSecondsOf(task.resolve("stat"));
        }
      }
      return sum;
    } catch (IOException | RuntimeException e) {
      return Double.NaN; // not Linux, or a compiler thread ended while listing
    }
  }

  private static double cpuSecondsOf(Path stat) throws IOException {
    String s = Files.readString(stat);
    String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // fields 14, 15 counted from 1
  }

  @Override
  public void close() throws IOException {
    in.close();
    try {
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
