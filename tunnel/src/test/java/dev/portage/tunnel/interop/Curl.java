package dev.portage.tunnel.interop;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** Runs the real curl through an HTTP CONNECT proxy ({@code curl -p -x}), as operators would. */
final class Curl {
  private Curl() {}

  /** Fetches {@code url} through the proxy into {@code out}; returns curl's exit code, stderr in the message. */
  static void fetch(int proxyPort, String url, Path out) throws IOException, InterruptedException {
    Path curl = null;
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "curl"))) {
        curl = Path.of(dir, "curl");
        break;
      }
    }
    if (curl == null) {
      fail("curl is not installed (apt-get install curl; bin/test does)");
    }
    ProcessBuilder pb = new ProcessBuilder(curl.toString(), "-sS", "--fail", "--max-time", "20", "-p", "-x",
        "http://127.0.0.1:" + proxyPort, "-o", out.toString(), url);
    // Proxy variables of the environment must not change what curl does (no_proxy could bypass -x).
    pb.environment().keySet().removeIf(k -> k.toLowerCase(Locale.ROOT).endsWith("_proxy"));
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("curl did not finish in 30 s");
    }
    if (p.exitValue() != 0) {
      fail("curl exited " + p.exitValue() + ": " + output);
    }
  }
}
