package dev.portage.bench.serviceproxy;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code portage service-proxy} as its own process, started from the CLI jar the way a node runs it
 * ({@code --kubeconfig}, {@code --proxy-mode}), so its heap and CPU are its own. Its log goes to a
 * file; {@link #close()} stops it with SIGTERM (then SIGKILL).
 */
final class ProxyProcess implements AutoCloseable {

  private final Process process;
  private final Path log;
  private final int metricsPort;

  private ProxyProcess(Process process, Path log, int metricsPort) {
    this.process = process;
    this.log = log;
    this.metricsPort = metricsPort;
  }

  /**
   * Starts the proxy.
   *
   * @param jar the CLI jar ({@code cli/target/portage.jar})
   * @param mode {@code nftables} or {@code userspace}
   * @param maxHeap the JVM's {@code -Xmx}, e.g. {@code 256m}
   */
  static ProxyProcess start(Path jar, Path kubeconfig, String mode, String maxHeap) throws IOException {
    int metrics;
    try (ServerSocket s = new ServerSocket(0)) {
      metrics = s.getLocalPort();
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + maxHeap,
        "--enable-native-access=ALL-UNNAMED", "-Dio.netty.leakDetection.level=disabled"));
    if (Runtime.version().feature() >= 23) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(List.of("-jar", jar.toString(), "service-proxy", "--kubeconfig", kubeconfig.toString(),
        "--proxy-mode", mode, "--hostname-override", "bench-node",
        "--metrics-bind-address", "127.0.0.1:" + metrics, "--healthz-bind-address", "127.0.0.1:0"));
    Path log = Files.createTempFile("service-proxy-" + mode, ".log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new ProxyProcess(p, log, metrics);
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  boolean alive() {
    return process.isAlive();
  }

  /** {@code /metrics} of the proxy. */
  String metrics() throws IOException, InterruptedException {
    return run(List.of("curl", "-sf", "http://127.0.0.1:" + metricsPort + "/metrics"));
  }

  /** The value of series {@code name} (any labels) from {@link #metrics()}, or -1. */
  static double value(String metrics, String name) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? ([0-9.eE+-]+)").matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }

  /** The heap in use after a full GC, in MiB, from {@code jcmd}. */
  double heapUsedAfterGcMib() throws IOException, InterruptedException {
    String jcmd = Path.of(ProcessHandle.current().info().command().orElse("java")).resolveSibling("jcmd").toString();
    run(List.of(jcmd, Long.toString(pid()), "GC.run"));
    String info = run(List.of(jcmd, Long.toString(pid()), "GC.heap_info"));
    Matcher m = Pattern.compile("used (\\d+)K").matcher(info);
    if (!m.find()) {
      throw new IOException("cannot read GC.heap_info: " + info);
    }
    return Long.parseLong(m.group(1)) / 1024.0;
  }

  static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " failed: " + out.strip());
    }
    return out;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
