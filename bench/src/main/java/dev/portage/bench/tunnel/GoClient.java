package dev.portage.bench.tunnel;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The grpc-go Konnectivity client ({@code e2e/konnectivity-go bench -serve}) as the client of a gRPC
 * frontend: one child process holding one HTTP/2 connection for the whole run, as kube-apiserver's
 * konnectivity client is grpc-go. Each measurement is one command line on its stdin and one result
 * line on its stdout; the transfer is timed inside the Go process, and its CPU time is this process's
 * own (read from {@code /proc} like the relays'). Used from the harness's main thread only; closing it
 * closes its stdin, which ends it.
 */
final class GoClient implements AutoCloseable {
  private static final Pattern FIELD = Pattern.compile("(?:^|\\s)(\\w+)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S*)");

  private final Process process;
  private final BufferedReader out;
  private final OutputStream in;
  private final Path log;

  /**
   * Starts {@code binary bench -serve} against the gRPC frontend on {@code proxyPort}, dialing
   * {@code target}; {@code window} > 0 fixes the HTTP/2 windows (0: grpc-go's default, BDP estimation);
   * {@code heapMiB} > 0 keeps that much heap live so Go's GC paces like a process with a real heap
   * (kube-apiserver's is hundreds of MiB); {@code cpuProfile}, if not null, receives a Go CPU profile of
   * the process's whole life.
   */
  GoClient(Path binary, int proxyPort, String target, int window, int heapMiB, Path cpuProfile, Path logDir)
      throws IOException {
    List<String> cmd = new ArrayList<>(List.of(binary.toString(), "bench", "-serve",
        "-proxy", "127.0.0.1:" + proxyPort, "-address", target, "-window", Integer.toString(window),
        "-heap-mib", Integer.toString(heapMiB)));
    if (cpuProfile != null) {
      cmd.addAll(List.of("-cpuprofile", cpuProfile.toString()));
    }
    Files.createDirectories(logDir);
    log = logDir.resolve("grpcgo.log");
    process = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    in = process.getOutputStream();
    String ready = out.readLine();
    if (ready == null || !ready.startsWith("ready")) {
      close();
      throw new IOException("the grpc-go client did not start (" + ready + "); see " + log);
    }
  }

  long pid() {
    return process.pid();
  }

  /** Downloads {@code totalBytes} split over {@code streams} Proxy streams; returns bits per second. */
  double throughput(long totalBytes, int streams) throws IOException {
    String line = command("stream " + totalBytes + " " + streams, "stream");
    long bytes = Long.parseLong(field(line, "bytes"));
    if (bytes != totalBytes / streams * streams) {
      throw new IOException("grpc-go client: received " + bytes + " of " + totalBytes + " bytes");
    }
    return bytes * 8.0 / Double.parseDouble(field(line, "seconds"));
  }

  /** {@code n} sequential dials (connect + 1-byte echo); returns the sorted latencies in nanoseconds. */
  long[] dialLatencies(int n) throws IOException {
    String[] ns = field(command("dials " + n, "dials"), "ns").split(",");
    long[] lat = new long[ns.length];
    for (int i = 0; i < ns.length; i++) {
      lat[i] = Long.parseLong(ns[i]);
    }
    Arrays.sort(lat);
    return lat;
  }

  private String command(String command, String result) throws IOException {
    in.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
    in.flush();
    String line = out.readLine();
    if (line == null) {
      throw new IOException("the grpc-go client exited; see " + log);
    }
    if (!line.startsWith(result + " ")) {
      throw new IOException("grpc-go client, " + command + ": " + line);
    }
    return line;
  }

  /** The value of {@code key=value} (or {@code key="quoted"}) in a result line. */
  static String field(String line, String key) throws IOException {
    Matcher m = FIELD.matcher(line);
    while (m.find()) {
      if (m.group(1).equals(key)) {
        String v = m.group(2);
        return v.startsWith("\"") ? v.substring(1, v.length() - 1) : v;
      }
    }
    throw new IOException("no " + key + "= in: " + line);
  }

  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      // the process already ended
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
