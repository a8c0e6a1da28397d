package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.portage.cli.quickstart.Quickstart;
import dev.portage.cli.quickstart.QuickstartPorts;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The tunnel server's dashboard in a real headless Chromium (Debian's {@code chromium}, driven by
 * playwright-core through {@code e2e/dashboard/dashboard.mjs}) against the real quickstart: the page
 * loads with live numbers, changes when a tunnel opens, and shows its error banner once the server
 * is gone. Chromium, node and {@code npm ci} in e2e/dashboard are required (bin/test installs them):
 * without them this test fails, it does not skip.
 */
class DashboardBrowserIT {

  private static final Path E2E = Path.of("..", "e2e", "dashboard").toAbsolutePath().normalize();
  private static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium"));
  private static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots").toAbsolutePath();
  private static final long STEP_SECONDS = 20;

  @Test
  void tunnelServerDashboardShowsLiveNumbersAndChangesWhenATunnelOpens() throws Exception {
    requireBrowserTools();
    Quickstart quickstart = Quickstart.start("127.0.0.1", QuickstartPorts.ephemeral(), Duration.ofSeconds(30));
    Process node = null;
    try {
      String url = quickstart.dashboards().get("tunnel server");
      node = new ProcessBuilder("node", "dashboard.mjs", url, "Server", "established connections",
              SCREENSHOTS.toString())
          .directory(E2E.toFile())
          .redirectErrorStream(true)
          .start();
      BlockingQueue<String> lines = lines(node.getInputStream());

      String loaded = awaitLine(lines, "LOADED");
      assertThat(loaded)
          .startsWith("LOADED established connections=0 ")
          .contains("sections=Server|Agents|Readiness")
          .contains("updated=last updated");

      InetSocketAddress proxy = (InetSocketAddress) quickstart.server().frontendAddress();
      try (Socket tunnel = openTunnel(proxy, quickstart.backends().get(0).address())) {
        assertThat(awaitLine(lines, "CHANGED")).isEqualTo("CHANGED established connections=1");
      }

      quickstart.close();
      assertThat(awaitLine(lines, "BANNER")).startsWith("BANNER Cannot fetch the live state");
      assertThat(node.waitFor(STEP_SECONDS, TimeUnit.SECONDS)).as("the browser script exits").isTrue();
      assertThat(node.exitValue()).isZero();
    } finally {
      quickstart.close();
      if (node != null) {
        node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** Fails (never skips) with what to install: CI must run this test. */
  private static void requireBrowserTools() throws InterruptedException {
    if (!Files.isExecutable(CHROMIUM)) {
      fail(CHROMIUM + " is missing: install Debian's chromium (apt-get install -y chromium; bin/test does it)");
    }
    try {
      Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        fail("'node --version' failed: install Node.js 20+ (apt-get install -y nodejs npm)");
      }
    } catch (IOException e) {
      fail("node is missing from PATH: install Node.js 20+ (apt-get install -y nodejs npm): " + e.getMessage());
    }
    if (!Files.isDirectory(E2E.resolve("node_modules").resolve("playwright-core"))) {
      fail("playwright-core is not installed: run 'npm ci' in " + E2E + " (bin/test does it)");
    }
  }

  /** Echoes the script's output to the test log and queues each line. */
  private static BlockingQueue<String> lines(InputStream in) {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread.ofVirtual().name("dashboard-script-output").start(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          System.out.println("dashboard.mjs: " + line);
          lines.add(line);
        }
      } catch (IOException e) {
        lines.add("FAIL reading the script's output: " + e.getMessage());
      }
    });
    return lines;
  }

  /** The next line starting with {@code prefix}; fails on a FAIL line or after the step timeout. */
  private static String awaitLine(BlockingQueue<String> lines, String prefix) throws InterruptedException {
    List<String> seen = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_SECONDS);
    while (true) {
      long left = deadline - System.nanoTime();
      String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
      if (line == null) {
        return fail("no '" + prefix + "' line from dashboard.mjs within " + STEP_SECONDS + " s; output: " + seen);
      }
      seen.add(line);
      if (line.startsWith("FAIL")) {
        return fail("dashboard.mjs: " + line + "; output: " + seen);
      }
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }

  /** An HTTP CONNECT tunnel to {@code target}, left open: the server counts it as established. */
  private static Socket openTunnel(InetSocketAddress proxy, InetSocketAddress target) throws IOException {
    Socket s = new Socket(proxy.getAddress(), proxy.getPort());
    s.setSoTimeout(10_000);
    String t = target.getAddress().getHostAddress() + ":" + target.getPort();
    s.getOutputStream().write(("CONNECT " + t + " HTTP/1.1\r\nHost: " + t + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    StringBuilder head = new StringBuilder();
    int c;
    while (!head.toString().endsWith("\r\n\r\n") && (c = s.getInputStream().read()) >= 0) {
      head.append((char) c);
    }
    assertThat(head.toString()).startsWith("HTTP/1.1 200");
    return s;
  }
}
