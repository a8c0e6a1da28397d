package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the real {@code bin/portage} script in the ways a fresh machine would. */
class LauncherIT {

  private static final Path LAUNCHER = Path.of("..", "bin", "portage").toAbsolutePath().normalize();

  @Test
  void withoutAnyJdk21ItExitsWithOneClearLine(@TempDir Path emptyJvmDir) throws Exception {
    // A PATH with only the basic tools and a JAVA_HOME that is not a JDK: no java >= 21 anywhere
    // the script may look, except /usr/lib/jvm which we cannot hide; so point the script at a copy
    // whose /usr/lib/jvm glob is replaced.
    Path script = emptyJvmDir.resolve("portage");
    String text = Files.readString(LAUNCHER, StandardCharsets.UTF_8).replace("/usr/lib/jvm/*", emptyJvmDir + "/none/*");
    Files.writeString(script, text);
    ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), "--version");
    pb.environment().put("PATH", "/usr/bin:/bin");
    pb.environment().put("JAVA_HOME", emptyJvmDir.toString());
    // /usr/bin/java is 17 on this kind of machine; if it is 21+ the script rightly accepts it.
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (systemJavaMajor() >= 21) {
      return;
    }
    assertThat(p.exitValue()).isNotZero();
    assertThat(err.strip().lines()).hasSize(1);
    assertThat(err).contains("no Java 21+ found").contains("install a JDK 21 or newer");
  }

  @Test
  void findsAJdk21AndRunsTheJar() throws Exception {
    ProcessBuilder pb = new ProcessBuilder("bash", LAUNCHER.toString(), "--version");
    pb.environment().remove("JAVA_HOME");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("portage ");
    int major = Integer.parseInt(out.replaceAll("(?s).*java (\\d+).*", "$1"));
    assertThat(major).isGreaterThanOrEqualTo(21);
  }

  @Test
  void portageJarRunsThatJarInsteadOfBuildingTheProjects(@TempDir Path dir) throws Exception {
    // A jar whose only content names a main class that does not exist: if the launcher runs it, the
    // JVM says so; if it ignored PORTAGE_JAR it would print the project's version instead.
    Path other = dir.resolve("other-build.jar");
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "other.build.Main");
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(other), manifest)) {
      // the manifest is the whole jar
    }
    ProcessBuilder pb = new ProcessBuilder("bash", LAUNCHER.toString(), "--version");
    pb.environment().remove("JAVA_HOME");
    pb.environment().put("PORTAGE_JAR", other.toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(out).contains("other.build.Main").doesNotContain("portage 0.").doesNotContain("building");
    assertThat(p.exitValue()).isNotZero();
  }

  @Test
  void aMissingPortageJarExitsWithOneClearLine(@TempDir Path dir) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("bash", LAUNCHER.toString(), "--version");
    pb.environment().remove("JAVA_HOME");
    pb.environment().put("PORTAGE_JAR", dir.resolve("missing.jar").toString());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).isNotZero();
    assertThat(err.strip().lines()).hasSize(1);
    assertThat(err).contains("PORTAGE_JAR: " + dir.resolve("missing.jar") + " is not a file");
  }

  @Test
  void serverStopsOnSigtermWithExitCodeZero() throws Exception {
    assertSigtermStopsTheServerWithExitCodeZero("started: agents on");
  }

  @Test
  void aSigtermWhileTheServerIsStartingStopsItWithExitCodeZero() throws Exception {
    // The first log line of the command comes after it took over the signals, while it is starting.
    assertSigtermStopsTheServerWithExitCodeZero(" INFO ");
  }

  /** Starts `portage server`, sends SIGTERM on the first output line containing {@code trigger}. */
  private static void assertSigtermStopsTheServerWithExitCodeZero(String trigger) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("bash", LAUNCHER.toString(), "server", "--mode", "http-connect",
        "--server-bind-address", "127.0.0.1", "--server-port", "0", "--agent-bind-address", "127.0.0.1",
        "--agent-port", "0", "--health-bind-address", "127.0.0.1", "--health-port", "0", "--admin-port", "0");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    StringBuilder out = new StringBuilder();
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = lines.readLine()) != null && !line.contains(trigger)) {
        out.append(line).append('\n');
      }
      assertThat(line).as("a line with \"%s\"; output so far:%n%s", trigger, out).isNotNull();
      // SIGTERM as an operator or the kubelet sends it (bin/portage execs the JVM, so it gets it).
      // Not Process.destroy(): that also closes the streams this test still reads.
      assertThat(new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor()).isZero();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      while ((line = lines.readLine()) != null) {
        out.append(line).append('\n');
      }
    } finally {
      p.destroyForcibly();
    }
    assertThat(p.exitValue()).as(out.toString()).isZero();
    assertThat(out).contains("Received SIGTERM: stopping");
  }

  private static int systemJavaMajor() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("/usr/bin/java", "-XshowSettings:properties", "-version").redirectErrorStream(true).start();
    String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    String v = s.replaceAll("(?s).*java.specification.version = ([0-9.]+).*", "$1");
    return Integer.parseInt(v.startsWith("1.") ? v.substring(2) : v.split("\\.")[0]);
  }
}
