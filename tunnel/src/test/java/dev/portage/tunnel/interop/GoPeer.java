package dev.portage.tunnel.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running process of the grpc-go Konnectivity peer (e2e/konnectivity-go): its stdout events are
 * collected line by line for the test to wait on, its stderr goes to a file under target/. The
 * binary is built once per JVM with {@code go build} from Debian's grpc-go sources (GOPATH mode,
 * offline). Closing kills the process.
 */
final class GoPeer implements AutoCloseable {
  // Bounded, but generous: the test machine's two cores are shared with other builds, and the first
  // connect pays for warm-up.
  static final Duration WAIT = Duration.ofSeconds(20);
  static final String APT_PACKAGES = "golang-go golang-google-grpc-dev golang-google-protobuf-dev";
  private static final Logger log = LoggerFactory.getLogger(GoPeer.class);
  private static final Path GOPATH = Path.of("/usr/share/gocode");
  private static final Pattern FIELD = Pattern.compile("(?:^|\\s)([\\w.-]+)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S*)");
  private static Path binary;

  private final Process process;
  private final String name;
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final Thread reader;

  private GoPeer(Process process, String name) {
    this.process = process;
    this.name = name;
    reader = Thread.ofVirtual().start(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          log.debug("{}: {}", name, line);
          events.add(line);
        }
      } catch (IOException e) {
        // the process was killed
      }
    });
  }

  /** Starts {@code konnectivity-go <args>}; stdin comes from {@code stdin} (null: an open pipe). */
  static GoPeer start(Path stdin, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    if (stdin != null) {
      pb.redirectInput(stdin.toFile());
    }
    Path logs = moduleDir().resolve("target/konnectivity-go/logs");
    Files.createDirectories(logs);
    String name = args[0] + "-" + System.nanoTime();
    pb.redirectError(logs.resolve(name + ".stderr").toFile());
    return new GoPeer(pb.start(), name);
  }

  static GoPeer start(String... args) throws IOException {
    return start(null, args);
  }

  /** Builds the binary on first use; a missing Go toolchain fails the test with the packages to install. */
  static synchronized Path binary() throws IOException {
    if (binary != null) {
      return binary;
    }
    Path go = findGo().orElse(null);
    if (go == null || !Files.isDirectory(GOPATH.resolve("src/google.golang.org/grpc"))
        || !Files.isDirectory(GOPATH.resolve("src/google.golang.org/protobuf"))) {
      fail("the grpc-go interop tests need Go and Debian's grpc-go sources in " + GOPATH
          + "; install them: apt-get install " + APT_PACKAGES + " (bin/test does)");
    }
    Path src = moduleDir().resolveSibling("e2e/konnectivity-go");
    Path out = moduleDir().resolve("target/konnectivity-go/konnectivity-go");
    Files.createDirectories(out.getParent());
    ProcessBuilder pb = new ProcessBuilder(go.toString(), "build", "-o", out.toString(), ".")
        .directory(src.toFile())
        .redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("GO111MODULE", "off"); // Debian ships grpc-go as GOPATH sources; no module proxy is needed
    env.put("GOPATH", GOPATH.toString());
    env.put("GOFLAGS", "");
    if (env.get("HOME") == null && env.get("GOCACHE") == null) {
      env.put("GOCACHE", moduleDir().resolve("target/konnectivity-go/cache").toString());
    }
    long start = System.nanoTime();
    Process p = pb.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        fail("go build did not finish in 5 minutes");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    assertThat(p.exitValue()).as("go build in %s:\n%s", src, output).isZero();
    log.info("built {} in {} ms", out, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    binary = out;
    return binary;
  }

  private static Optional<Path> findGo() {
    List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
    dirs.add("/usr/lib/go/bin");
    return dirs.stream().map(d -> Path.of(d, "go")).filter(Files::isExecutable).findFirst();
  }

  /** The tunnel module's directory: Failsafe runs tests there, an IDE may run them from the root. */
  static Path moduleDir() {
    Path cwd = Path.of("").toAbsolutePath();
    return Files.isDirectory(cwd.resolve("tunnel/src")) ? cwd.resolve("tunnel") : cwd;
  }

  /** Waits for the first event line starting with {@code prefix} and returns it. */
  String awaitEvent(String prefix) {
    return awaitEvent(l -> l.startsWith(prefix), prefix);
  }

  String awaitEvent(Predicate<String> match, String what) {
    String[] found = new String[1];
    await().atMost(WAIT).pollInterval(Duration.ofMillis(10)).alias(name + " prints " + what + "; so far " + events)
        .until(() -> {
          for (String l : events) {
            if (match.test(l)) {
              found[0] = l;
              return true;
            }
          }
          return false;
        });
    return found[0];
  }

  List<String> events() {
    return List.copyOf(events);
  }

  /** The value of {@code key=value} or {@code key="quoted value"} in an event line. */
  static String field(String line, String key) {
    Matcher m = FIELD.matcher(line);
    while (m.find()) {
      if (m.group(1).equals(key)) {
        String v = m.group(2);
        return v.startsWith("\"") ? v.substring(1, v.length() - 1).replace("\\\"", "\"") : v;
      }
    }
    throw new AssertionError("no " + key + "= in: " + line);
  }

  /** Waits (bounded) for the process to exit on its own and returns its exit code. */
  int awaitExit() throws InterruptedException {
    assertThat(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).as("%s exits; events %s", name, events).isTrue();
    reader.join(WAIT.toMillis());
    return process.exitValue();
  }

  /** SIGKILL: the TCP connection dies without a gRPC goodbye, like a crashed peer. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /** Writes one line to the process's stdin (started with an open pipe). */
  void tell(String line) throws IOException {
    process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
    process.getOutputStream().flush();
  }

  boolean alive() {
    return process.isAlive();
  }

  @Override
  public void close() throws InterruptedException {
    kill();
    reader.join(WAIT.toMillis());
  }
}
