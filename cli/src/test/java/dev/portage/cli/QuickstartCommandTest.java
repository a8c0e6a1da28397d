package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class QuickstartCommandTest {

  @Test
  void checkModeStartsEverythingAndEveryPathPasses() {
    StringWriter out = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(out, true));
    int exit = cl.execute("quickstart", "--ephemeral-ports", "--check");
    assertThat(exit).as(out.toString()).isZero();
    assertThat(out.toString())
        .contains("Portage quickstart is running.")
        .contains("curl -p -x http://127.0.0.1:")
        .contains("gRPC frontend (ProxyService.Proxy): 127.0.0.1:")
        .contains("PASS  HTTP CONNECT tunnel -> fast /success")
        .contains("PASS  HTTP CONNECT tunnel -> slow /success")
        .contains("PASS  service proxy -> demo /success")
        .contains("PASS  sidecar -> fast.default /success")
        .contains("PASS  sidecar -> web.default (split) /success")
        .contains("Control plane (dds RuleService.Observe + Linkerd Destination)")
        .contains("PASS  edge hub online -> API server")
        .contains("PASS  edge hub, API server offline -> cache")
        .contains("PASS  edge hub, API server online again -> API server")
        .containsPattern("kubectl --kubeconfig \\S+ get pods -A")
        .containsPattern("curl -X POST http://127.0.0.1:\\d+/upstream/offline")
        .contains("Dashboards (live state in the browser, refreshed every second):")
        .containsPattern("tunnel server +http://127\\.0\\.0\\.1:\\d+/dashboard\n")
        .containsPattern("sidecar +http://127\\.0\\.0\\.1:\\d+/dashboard\n")
        .containsPattern("edge hub +http://127\\.0\\.0\\.1:\\d+/dashboard\n")
        .doesNotContain("FAIL");
  }

  @Test
  void thePrintedCurlCommandWorksWithRealCurl() throws Exception {
    try (var q = dev.portage.cli.quickstart.Quickstart.start(
        "127.0.0.1", dev.portage.cli.quickstart.QuickstartPorts.ephemeral(), java.time.Duration.ofSeconds(30))) {
      Matcher m = Pattern.compile("(curl -p -x \\S+ \\S+/success)").matcher(q.guide());
      assertThat(m.find()).as(q.guide()).isTrue();
      List<String> argv = new ArrayList<>(Arrays.asList(m.group(1).split(" ")));
      argv.add(1, "-sS");
      argv.add(2, "--max-time");
      argv.add(3, "20");
      Process curl = new ProcessBuilder(argv).redirectErrorStream(true).start();
      String body = new String(curl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(curl.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(curl.exitValue()).as(body).isZero();
      assertThat(body).isEqualTo("success");

      // The printed kubectl commands reach the mock API server through the hub, and keep working
      // from the hub's cache after the printed curl takes the API server offline.
      String guide = q.guide();
      Matcher get = Pattern.compile("(kubectl --kubeconfig \\S+ get pods -A)").matcher(guide);
      Matcher yaml = Pattern.compile("(kubectl --kubeconfig \\S+ get pod web-0 -o yaml)").matcher(guide);
      Matcher offline = Pattern.compile("(curl -X POST \\S+/upstream/offline)").matcher(guide);
      Matcher online = Pattern.compile("(curl -X POST \\S+/upstream/online)").matcher(guide);
      assertThat(get.find() && yaml.find() && offline.find() && online.find()).as(guide).isTrue();
      String pods = run(get.group(1));
      assertThat(pods).contains("web-0", "web-1", "db-0");
      String web0 = run(yaml.group(1));
      assertThat(web0).contains("name: web-0");
      assertThat(run(offline.group(1))).contains("is offline");
      assertThat(q.apiServer().isOnline()).isFalse();
      assertThat(run(get.group(1))).contains("web-0", "web-1", "db-0"); // AGE may have moved on
      assertThat(run(yaml.group(1))).isEqualTo(web0);
      assertThat(run(online.group(1))).contains("is online");
      assertThat(q.apiServer().isOnline()).isTrue();
    }
  }

  /** Runs a printed command line (no quoting in it); returns stdout, failing on a non-zero exit. */
  private static String run(String commandLine) throws Exception {
    List<String> argv = new ArrayList<>(Arrays.asList(commandLine.split(" ")));
    if (argv.get(0).equals("kubectl")) {
      argv.addAll(List.of("--request-timeout", "10s"));
    } else {
      argv.addAll(1, List.of("-sS", "--max-time", "20"));
    }
    Process p = new ProcessBuilder(argv).redirectErrorStream(false).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("%s: %s", commandLine, err).isZero();
    return out;
  }

  @Test
  void busyPortsGiveAClearMessage() throws Exception {
    try (java.net.ServerSocket busy = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      var ports = dev.portage.cli.quickstart.QuickstartPorts.ephemeralExceptHttpConnect(busy.getLocalPort());
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> dev.portage.cli.quickstart.Quickstart.start(
              "127.0.0.1", ports, java.time.Duration.ofSeconds(5)))
          .hasMessageContaining("tunnel server could not bind its ports")
          .hasMessageContaining("--ephemeral-ports");
    }
  }
}
