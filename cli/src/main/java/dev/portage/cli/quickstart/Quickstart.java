package dev.portage.cli.quickstart;

import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.EdgeHub;
import dev.portage.hub.EdgeHubConfig;
import dev.portage.hub.bootstrap.NodeBootstrap;
import dev.portage.hub.remote.Upstreams;
import dev.portage.proxy.mesh.Sidecar;
import dev.portage.proxy.mesh.SidecarConfig;
import dev.portage.proxy.service.ServiceProxy;
import dev.portage.proxy.service.ServiceProxyConfig;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Everything {@code portage quickstart} runs, started in dependency order and closed in reverse on
 * every path: demo backends of three speeds, a tunnel server in HTTP-CONNECT mode with an extra gRPC
 * frontend and one agent connected to it, a control plane on the bundled example directory (rewritten
 * to the backends' real ports), a service proxy balancing over the backends, and a sidecar resolving
 * through the control plane, and an edge hub in front of a mock Kubernetes API server that can be
 * taken offline. {@link #guide()} is the text printed for the user; {@link #check} sends
 * one request through each path.
 */
public final class Quickstart implements AutoCloseable {

  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private final String host;
  private final ScheduledExecutorService scheduler =
      TimeSource.newTimer("portage-quickstart-timer");
  private List<DemoBackend> backends;
  private TunnelServer server;
  private TunnelAgent agent;
  private ControlPlane controlPlane;
  private ServiceProxy serviceProxy;
  private Sidecar sidecar;
  private MockApiServer apiServer;
  private EdgeHub hub;
  private QuickstartAdmin admin;
  private Path kubeconfig;
  private Path workDir;

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
            .adminBindAddress(host)
            .adminPort(ports.tunnelAdmin())
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
            .adminBindAddress(host)
            .adminServerPort(ports.agentAdmin())
            .build(),
        time, new PrometheusRegistry()));
    bindOrExplain("tunnel agent", agent::start);
    await("the agent to connect to the tunnel server", server::ready, readyTimeout);

    workDir = Files.createTempDirectory("portage-quickstart-");
    started.push(this::deleteWorkDir);
    Path examples = Files.createDirectories(workDir.resolve("control-plane"));
    writeExamples(examples);
    controlPlane = own(new ControlPlane(ControlPlaneConfig.builder()
            .source(ControlPlaneConfig.SourceType.FILES)
            .dir(examples)
            .grpcBindAddress(host)
            .grpcPort(ports.controlPlaneGrpc())
            .adminBindAddress(host)
            .adminPort(ports.controlPlaneAdmin())
            .build(),
        time, new PrometheusRegistry()));
    bindOrExplain("control plane", () -> {
      controlPlane.start();
      return controlPlane;
    });
    await("the control plane to load its example directory", controlPlane::isReady, readyTimeout);

    Path endpoints = workDir.resolve("endpoints.yaml");
    Files.writeString(endpoints, endpointsFile(ports.serviceProxy()));
    serviceProxy = own(new ServiceProxy(ServiceProxyConfig.builder()
            .endpointsFile(endpoints)
            .bindAddress(host)
            .adminBindAddress(host)
            .adminPort(ports.serviceProxyAdmin())
            .build(),
        time, new PrometheusRegistry()));
    bindOrExplain("service proxy", serviceProxy::start);
    await("the service proxy's first sync", serviceProxy::isReady, readyTimeout);

    sidecar = own(new Sidecar(
        SidecarConfig.defaults(hostPort(controlPlane.grpcAddress()))
            .withPorts(ports.sidecarOutbound(), ports.sidecarAdmin()),
        time, new PrometheusRegistry()));
    bindOrExplain("sidecar", () -> {
      sidecar.start();
      return sidecar;
    });
    startHub(ports, time);
  }

  /**
   * The edge hub block: a mock API server, the hub in front of it (caching every component, so
   * kubectl's answers are cached too; 1 s health checks so offline and online show at once), the
   * offline/online switch, and a kubeconfig pointing kubectl at the hub.
   */
  private void startHub(QuickstartPorts ports, TimeSource time) throws IOException {
    bindOrExplain("mock API server", () -> apiServer = own(MockApiServer.start(host, ports.mockApiServer())));
    EdgeHubConfig config = EdgeHubConfig.builder(List.of(apiServer.url()), workDir.resolve("hub-cache"))
        .bindAddresses(host, host)
        .ports(ports.hubProxy(), 0, ports.hubServe())
        .heartbeat(new Upstreams.Heartbeat(Duration.ofSeconds(1), Duration.ofSeconds(1), 1, 1))
        .cacheAgents(java.util.Set.of("*"))
        .nodeName("edge-node-1") // the node of the mock API server's pods
        // Its own root directory: never a YurtHub's certificates that happen to be on the machine.
        .bootstrap(new NodeBootstrap(workDir.resolve("hub-root"), null, NodeBootstrap.Mode.TOKEN,
            List.of(), true))
        .build();
    hub = own(new EdgeHub(config, time, new PrometheusRegistry()));
    bindOrExplain("edge hub", hub::start);
    admin = own(QuickstartAdmin.start(host, ports.quickstartAdmin(), apiServer));
    kubeconfig = workDir.resolve("kubeconfig");
    Files.writeString(kubeconfig, HubCheck.kubeconfig("http://" + hostPort(hub.proxyAddress())));
  }

  /**
   * The bundled control-plane examples, with the demo backends' default ports (9101-9103) replaced by
   * the ports they really have.
   */
  private void writeExamples(Path dir) throws IOException {
    Map<String, String> ports = new LinkedHashMap<>();
    ports.put("9101", String.valueOf(backends.get(0).address().getPort()));
    ports.put("9102", String.valueOf(backends.get(1).address().getPort()));
    ports.put("9103", String.valueOf(backends.get(2).address().getPort()));
    for (String name : List.of("services.yaml", "web-profile.yaml", "rules.yaml")) {
      try (InputStream in = Quickstart.class.getResourceAsStream("/examples/" + name)) {
        if (in == null) {
          throw new IOException("bundled example " + name + " is missing from the jar");
        }
        String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        for (Map.Entry<String, String> e : ports.entrySet()) {
          text = text.replace(e.getKey(), e.getValue());
        }
        Files.writeString(dir.resolve(name), text);
      }
    }
  }

  private String endpointsFile(int listenPort) {
    StringBuilder y = new StringBuilder("services:\n  - name: demo\n    listen: ")
        .append(host).append(':').append(listenPort).append("\n    balancer: round-robin\n    endpoints:\n");
    for (DemoBackend b : backends) {
      y.append("      - \"").append(hostPort(b.address())).append("\"\n");
    }
    return y.toString();
  }

  private void deleteWorkDir() throws IOException {
    if (workDir == null) {
      return;
    }
    try (Stream<Path> files = Files.walk(workDir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
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
  void await(String what, BooleanSupplier condition, Duration timeout) throws Exception {
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

  /** The mock API server behind the hub. */
  public MockApiServer apiServer() {
    return apiServer;
  }

  /** The kubeconfig that points kubectl at the hub. */
  public Path kubeconfig() {
    return kubeconfig;
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
        .append("   metrics: curl http://").append(hostPort(server.adminAddress())).append("/metrics\n");
    g.append("  agent health:   curl http://").append(hostPort(agent.healthAddress())).append("/readyz?verbose")
        .append("   metrics: curl http://").append(hostPort(agent.adminAddress())).append("/metrics\n");
    g.append("\nControl plane (dds RuleService.Observe + Linkerd Destination) on ")
        .append(hostPort(controlPlane.grpcAddress())).append(", rules and services from ")
        .append(workDir.resolve("control-plane")).append(" (edit them: changes are pushed)\n");
    g.append("  status:  curl http://").append(hostPort(controlPlane.adminAddress())).append("/status\n");
    g.append("\nService proxy (L4, round robin over the three backends):\n");
    g.append("    for i in 1 2 3; do curl -s http://").append(hostPort(serviceProxy.localAddress("demo")))
        .append("/; done\n");
    g.append("  metrics: curl http://").append(hostPort(serviceProxy.adminAddress())).append("/metrics\n");
    g.append("\nSidecar (L7, P2C + peak-EWMA; the ServiceProfile splits web 50/30/20 over fast/medium/slow):\n");
    g.append("    for i in $(seq 10); do curl -s -H 'Host: web.default.svc.cluster.local:8080' http://")
        .append(hostPort(sidecar.outboundAddress())).append("/; done\n");
    g.append("    curl -s -H 'Host: fast.default.svc.cluster.local:8080' http://")
        .append(hostPort(sidecar.outboundAddress())).append("/success\n");
    g.append("  metrics: curl http://").append(hostPort(sidecar.adminAddress())).append("/metrics\n");
    String kubectl = "    kubectl --kubeconfig " + kubeconfig + " ";
    g.append("\nEdge hub (YurtHub) on ").append(hostPort(hub.proxyAddress()))
        .append(" in front of a mock Kubernetes API server (fabric8, CRUD mode) at ")
        .append(apiServer.url()).append(":\n");
    g.append(kubectl).append("get pods -A\n");
    g.append(kubectl).append("get pod web-0 -o yaml\n");
    g.append(kubectl).append("get pods -w\n");
    g.append("  take the API server offline (the hub answers from its cache), then back online:\n");
    g.append("    curl -X POST http://").append(hostPort(admin.address())).append("/upstream/offline\n");
    g.append("    curl -X POST http://").append(hostPort(admin.address())).append("/upstream/online\n");
    g.append("  cache: ").append(workDir.resolve("hub-cache"))
        .append("   hub health: curl http://").append(hostPort(hub.serverAddress()))
        .append("/v1/healthz   metrics: curl http://").append(hostPort(hub.serverAddress()))
        .append("/metrics\n");
    g.append("\nDashboards (live state in the browser, refreshed every second):\n");
    dashboards().forEach((name, url) -> g.append(String.format("  %-14s %s%n", name, url)));
    g.append("\nPress Ctrl-C to stop.");
    return g.toString();
  }

  /** Each component's {@code /dashboard} page, by component, in start order. */
  public Map<String, String> dashboards() {
    Map<String, String> urls = new LinkedHashMap<>();
    urls.put("tunnel server", dashboardUrl(server.adminAddress()));
    urls.put("tunnel agent", dashboardUrl(agent.adminAddress()));
    urls.put("control plane", dashboardUrl(controlPlane.adminAddress()));
    urls.put("service proxy", dashboardUrl(serviceProxy.adminAddress()));
    urls.put("sidecar", dashboardUrl(sidecar.adminAddress()));
    urls.put("edge hub", dashboardUrl(hub.serverAddress()));
    return urls;
  }

  private static String dashboardUrl(InetSocketAddress admin) {
    return "http://" + hostPort(admin) + "/dashboard";
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
    ok &= checkHttp(out, "service proxy -> demo", serviceProxy.localAddress("demo"), null, "/success");
    ok &= checkHttp(out, "sidecar -> fast.default", sidecar.outboundAddress(),
        "fast.default.svc.cluster.local:8080", "/success");
    ok &= checkHttp(out, "sidecar -> web.default (split)", sidecar.outboundAddress(),
        "web.default.svc.cluster.local:8080", "/success");
    ok &= new HubCheck(apiServer, hub::cloudHealthy, "http://" + hostPort(hub.proxyAddress()),
        this::await).run(out);
    return ok;
  }

  private static boolean checkHttp(PrintWriter out, String what, InetSocketAddress to, String authority, String path) {
    String result;
    try (Socket socket = new Socket(to.getAddress(), to.getPort())) {
      socket.setSoTimeout(20_000);
      result = get(socket, authority != null ? authority : hostPort(to), path);
    } catch (IOException e) {
      result = "error: " + e;
    }
    boolean pass = result.startsWith("HTTP/1.1 200") && result.endsWith("success");
    out.printf("%s  %s %s: %s%n", pass ? "PASS" : "FAIL", what, path, result);
    return pass;
  }

  /** One HTTP/1.1 GET on a connected socket; returns the status line, the X-Backend header and the body. */
  private static String get(Socket s, String authority, String path) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(("GET " + path + " HTTP/1.1\r\nHost: " + authority + "\r\nConnection: close\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    String response = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String status = response.lines().findFirst().orElse("no answer");
    int headEnd = response.indexOf("\r\n\r\n");
    String head = headEnd < 0 ? response : response.substring(0, headEnd);
    String backend = head.lines()
        .filter(l -> l.regionMatches(true, 0, "X-Backend:", 0, 10))
        .map(l -> l.substring(10).trim())
        .findFirst().orElse("?");
    return status + " (from " + backend + ") " + (headEnd < 0 ? "" : response.substring(headEnd + 4));
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
      return get(s, t, path);
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
