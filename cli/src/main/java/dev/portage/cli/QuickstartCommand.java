package dev.portage.cli;

import dev.portage.cli.quickstart.Quickstart;
import dev.portage.cli.quickstart.QuickstartPorts;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code portage quickstart}: every working component in one process, with a printed guide. */
@Command(
    name = "quickstart",
    mixinStandardHelpOptions = true,
    description = {
      "Starts, in one process: demo HTTP backends of three speeds, a tunnel server (HTTP CONNECT plus a",
      "gRPC frontend) with one agent, a control plane on the bundled example rules and services, a",
      "service proxy, a sidecar, and an edge hub in front of a mock Kubernetes API server that",
      "POST /upstream/offline takes away; prints the commands to try. Runs until Ctrl-C."
    })
final class QuickstartCommand implements Callable<Integer> {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--bind-address", defaultValue = "127.0.0.1",
      description = "Address every listener binds (default: ${DEFAULT-VALUE}).")
  String bindAddress;

  @Option(names = "--ephemeral-ports",
      description = "Pick free ports instead of the well-known defaults (8090, 9101, 10261, ...).")
  boolean ephemeralPorts;

  @Option(names = "--check",
      description = "Start everything, send one request through each path, print the results and exit (0 = all passed).")
  boolean check;

  @Option(names = "--ready-timeout", defaultValue = "30s", converter = GoDuration.class,
      description = "How long to wait for the agent to connect (default: ${DEFAULT-VALUE}).")
  Duration readyTimeout;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    QuickstartPorts ports = ephemeralPorts ? QuickstartPorts.ephemeral() : QuickstartPorts.defaults();
    try (Quickstart quickstart = Quickstart.start(bindAddress, ports, readyTimeout)) {
      out.println(quickstart.guide());
      out.flush();
      if (check) {
        boolean ok = quickstart.check(out);
        out.flush();
        return ok ? 0 : 1;
      }
      CountDownLatch stop = new CountDownLatch(1);
      Thread hook = new Thread(stop::countDown, "portage-quickstart-stop");
      Runtime.getRuntime().addShutdownHook(hook);
      stop.await();
    }
    return 0;
  }
}
