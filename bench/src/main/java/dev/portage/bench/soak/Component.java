package dev.portage.bench.soak;

import dev.portage.core.time.Ticker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One Portage component as a real child process of the runnable jar ({@code java -jar portage.jar
 * <args>}): started, killed with SIGKILL and restarted with the same arguments (so the same ports),
 * stopped with SIGTERM at the end. Its stdout and stderr go to {@code <logs>/<name>.log}, appended
 * across restarts with a marker line. Every instance's {@code /proc} samples are kept in its
 * {@link ResourceSeries}. Start, kill and stop are called from one thread at a time (the harness's
 * main or fault thread); {@link #pid()} and {@link #series()} may be read from any thread.
 */
final class Component {
  private static final Ticker TICKER = Ticker.system();
  private static final long SIGNAL_GAP_MILLIS = 2_000;
  private static final HttpClient PROBE = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).version(HttpClient.Version.HTTP_1_1).build();

  final String name;
  private final List<String> command;
  private final Path log;
  private final URI readyUri;
  private final ResourceSeries series = new ResourceSeries();
  private volatile Process process;
  private volatile int instances;
  private volatile boolean expectedDown;
  private volatile boolean crashSeen;

  Component(String name, List<String> javaCommand, List<String> args, Path logDir, URI readyUri) {
    this.name = name;
    this.command = new ArrayList<>(javaCommand);
    this.command.addAll(args);
    this.log = logDir.resolve(name + ".log");
    this.readyUri = readyUri;
  }

  /** Starts a new instance; its output is appended to the component's log. */
  void start(String why, long nowNanos) throws IOException {
    Files.writeString(log, "==== soak: start #" + (instances + 1) + " (" + why + "): "
        + String.join(" ", command) + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.redirectInput(ProcessBuilder.Redirect.PIPE); // kept open: EOF on stdin must not matter
    process = pb.start();
    instances++;
    series.newInstance(process.pid(), nowNanos);
    expectedDown = false;
    crashSeen = false;
  }

  /** SIGKILL, then waits until the process is gone. */
  void kill9() throws InterruptedException {
    Process p = process;
    if (p == null) {
      return;
    }
    expectedDown = true;
    p.destroyForcibly();
    p.waitFor(10, TimeUnit.SECONDS);
  }

  /**
   * SIGTERM {@code signals} times (the agent drains on the first and stops on the second), then
   * SIGKILL after {@code grace}. Returns the exit code, or -1 if it had to be killed.
   */
  int stop(int signals, Duration grace) throws InterruptedException {
    Process p = process;
    if (p == null) {
      return -1;
    }
    expectedDown = true;
    for (int i = 0; i < signals && p.isAlive(); i++) {
      p.destroy();
      // A second SIGTERM sent while the first is still pending is merged into it by the kernel.
      if (p.waitFor(i + 1 < signals ? SIGNAL_GAP_MILLIS : grace.toMillis(), TimeUnit.MILLISECONDS)) {
        break;
      }
    }
    if (!p.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      return -1;
    }
    return p.exitValue();
  }

  /**
   * Polls the ready URL (any 200) until it answers, the process dies, {@code stop} opens, or the
   * timeout passes. Returns whether it became ready.
   */
  boolean awaitReady(Duration timeout, CountDownLatch stop, SoakClock clock) throws InterruptedException {
    long deadline = TICKER.nanoTime() + timeout.toNanos();
    HttpRequest req = HttpRequest.newBuilder(readyUri).timeout(Duration.ofSeconds(2)).GET().build();
    while (TICKER.nanoTime() < deadline) {
      Process p = process;
      if (p == null || !p.isAlive()) {
        return false;
      }
      try {
        if (PROBE.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          series.ready(p.pid(), clock.now());
          return true;
        }
      } catch (IOException e) {
        // not listening yet
      }
      if (stop.await(200, TimeUnit.MILLISECONDS)) {
        return false;
      }
    }
    return false;
  }

  /**
   * The exit code if the current instance died without the harness killing or stopping it, reported
   * once per instance; otherwise null. Called by the sampler.
   */
  Integer unexpectedExit() {
    Process p = process;
    if (p == null || p.isAlive() || expectedDown || crashSeen) {
      return null;
    }
    crashSeen = true;
    return p.exitValue();
  }

  boolean alive() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** The current instance's pid, or -1 before the first start. */
  long pid() {
    Process p = process;
    return p == null ? -1 : p.pid();
  }

  int instances() {
    return instances;
  }

  ResourceSeries series() {
    return series;
  }

  Path log() {
    return log;
  }
}
