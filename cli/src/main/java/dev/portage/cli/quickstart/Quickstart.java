package dev.portage.cli.quickstart;

import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Everything {@code portage quickstart} runs, started in dependency order and closed in reverse on
 * every path: demo backends, a tunnel server in HTTP-CONNECT mode with an extra gRPC frontend, and one
 * agent connected to it. {@link #guide()} is the text printed for the user; {@link #check} sends one
 * request through each path.
 */
public final class Quickstart implements AutoCloseable {

  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private final String host;
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("portage-quickstart-timer").factory());
  private List<DemoBackend> backends;
  private TunnelServer server;
  private TunnelAgent agent;

  private Quickstart(String host) {
    this.host = host;
    started.push(scheduler::shutdownNow);
  }

  /** Starts every part; on failure closes what started and rethrows. */
  public static Quickstart start(String host, QuickstartPorts ports, Duration readyTimeout) throws Exception {
    Quickstart q = new Quickstart(host);
    try {
      q.startAll(ports, readyTimeout);
      return q;
    } catch (Exception | Error e) {
      q.close();
      throw e;
    }
  }

  private void startAll(QuickstartPorts ports, Duration readyTimeout) throws Exception {
    backends = List.of(
        own(DemoBackend.start("fast", host, ports.fastBackend(), Duration.ZERO)),
        own(DemoBackend.start("medium", host, ports.mediumBackend(), Duration.ofMillis(20))),
        own(DemoBackend.start("slow", host, ports.slowBackend(), Duration.ofMillis(200))));

    TimeSource time = TimeSource.system(scheduler);
    server = own(TunnelServer.builder(TunnelServerConfig.builder()
            .mode(FrontendMode.HTTP_CONNECT)
            .serverBindAddress(host)
            .serverPort(ports.tunnelHttpConnect())
            .grpcFrontendPort(ports.tunnelGrpc())
            .agentBindAddress(host)
            .agentPort(ports.tunnelAgent())
            .healthBindAddress(host)
            .healthPort(ports.tunnelHealth())
            .adminPort(-1)
            .build())
        .timeSource(time)
        .registry(new PrometheusRegistry())
        .build());
    bindOrExplain("tunnel server", server::start);

    agent = own(new TunnelAgent(TunnelAgentConfig.builder()
            .proxyServerHost(host)
            .proxyServerPort(server.agentPort())
            .agentId("quickstart-agent")
            .healthServerHost(host)
            .healthServerPort(ports.agentHealth())
            .adminServerPort(-1)
            .build(),
        time, new PrometheusRegistry()));
    bindOrExplain("tunnel agent", agent::start);
    await("the agent to connect to the tunnel server", server::ready, readyTimeout);
  }

  private interface Starter {
    Object start() throws IOException;
  }

  /** Turns "address in use" into a message that says which part and what to do. */
  private static void bindOrExplain(String what, Starter starter) throws IOException {
    try {
      starter.start();
    } catch (IOException | UncheckedIOException e) {
      throw new IOException(what + " could not bind its ports (" + rootMessage(e)
          + "); stop whatever uses them or run 'portage quickstart --ephemeral-ports'", e);
    }
  }

  private static String rootMessage(Throwable t) {
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage();
  }

  private <T extends AutoCloseable> T own(T part) {
    started.push(part);
    return part;
  }

  /** Waits for a condition another thread makes true, polling on the scheduler. */
  private void await(String what, BooleanSupplier condition, Duration timeout) throws Exception {
    CompletableFuture<Void> done = new CompletableFuture<>();
    ScheduledFuture<?> poll = scheduler.scheduleWithFixedDelay(() -> {
      if (condition.getAsBoolean()) {
        done.complete(null);
      }
    }, 0, 20, TimeUnit.MILLISECONDS);
    try {
      done.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("timed out after " + timeout + " waiting for " + what, e);
    } finally {
      poll.cancel(false);
    }
  }

  public List<DemoBackend> backends() {
    return backends;
  }

  public TunnelServer server() {
    return server;
  }

  public TunnelAgent agent() {
    return agent;
  }

  private InetSocketAddress httpConnect() {
    return (InetSocketAddress) server.frontendAddress();
  }

  /** The text printed for the user: what runs where, and commands to try. */
  public String guide() {
    StringBuilder g = new StringBuilder();
    g.append("Portage quickstart is running.\n\n");
    g.append("Demo backends (Konnectivity test-server paths /success /sleep?time=N /error /close):\n");
    for (DemoBackend b : backends) {
      g.append(String.format("  %-6s http://%s%n", b.name(), hostPort(b.address())));
    }
    g.append("\nTunnel (Konnectivity): server ").append(server.config().serverId())
        .append(", agent quickstart-agent connected\n");
    g.append("  through the HTTP-CONNECT frontend to the fast backend:\n");
    g.append("    curl -p -x http://").append(hostPort(httpConnect())).append(" http://")
        .append(hostPort(backends.get(0).address())).append("/success\n");
    g.append("  gRPC frontend (ProxyService.Proxy): ").append(hostPort(server.grpcFrontendAddress())).append('\n');
    g.append("  agents connect to:                  ").append(hostPort(server.agentAddress())).append('\n');
    g.append("  server health:  curl http://").append(hostPort(server.healthAddress())).append("/readyz")
        .append("   metrics: curl http://").append(hostPort(server.healthAddress())).append("/metrics\n");
    g.append("  agent health:   curl http://").append(hostPort(agent.healthAddress())).append("/readyz?verbose\n");
    g.append("\nPress Ctrl-C to stop.");
    return g.toString();
  }

  private static String hostPort(InetSocketAddress a) {
    return a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  /** Sends one request through each path and prints a line per check; true if all passed. */
  public boolean check(PrintWriter out) {
    boolean ok = true;
    for (DemoBackend b : backends) {
      String result;
      try {
        result = getThroughConnect(httpConnect(), b.address(), "/success");
      } catch (IOException e) {
        result = "error: " + e.getMessage();
      }
      boolean pass = result.endsWith("success");
      ok &= pass;
      out.printf("%s  HTTP CONNECT tunnel -> %s /success: %s%n", pass ? "PASS" : "FAIL", b.name(),
          pass ? "200 success" : result);
    }
    return ok;
  }

  /** A minimal HTTP CONNECT client: CONNECT, expect 200, then GET path and return the status + body. */
  static String getThroughConnect(InetSocketAddress proxy, InetSocketAddress target, String path)
      throws IOException {
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      String t = hostPort(target);
      out.write(("CONNECT " + t + " HTTP/1.1\r\nHost: " + t + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String head = readHead(in);
      if (!head.startsWith("HTTP/1.1 200")) {
        return head.lines().findFirst().orElse("no answer");
      }
      out.write(("GET " + path + " HTTP/1.1\r\nHost: " + t + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      String status = response.lines().findFirst().orElse("");
      int body = response.indexOf("\r\n\r\n");
      return status + " " + (body < 0 ? "" : response.substring(body + 4));
    }
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      sb.append((char) c);
      if (sb.length() >= 4 && sb.substring(sb.length() - 4).equals("\r\n\r\n")) {
        break;
      }
    }
    return sb.toString();
  }

  @Override
  public void close() {
    while (!started.isEmpty()) {
      try {
        started.pop().close();
      } catch (Exception e) {
        // keep closing the rest; the process is ending anyway
      }
    }
  }
}
