package dev.portage.bench.soak;

import dev.portage.core.time.Ticker;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Fault-injection soak: every Portage component as a real child process of the runnable jar on
 * loopback — two tunnel server replicas (HTTP CONNECT) behind a round-robin forwarder with two
 * agents, the control plane on a manifest directory that keeps changing, the service proxy and the
 * sidecar resolving through the control plane's Destination API, the edge hub in front of a small
 * API server — under steady load from a fixed number of worker threads, while agent, server replica
 * and control plane are killed with SIGKILL and restarted, and the hub's upstream stopped and
 * started, at seeded random times. Prints a Markdown report (see {@link SoakReport}) and exits 1 if
 * a completed transfer had a wrong checksum, a component leaked, crashed or did not come back, 2 if
 * the setup failed. Run through {@code bench/soak.sh}.
 */
public final class Soak {
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(240);
  private static final Duration SAMPLE_EVERY = Duration.ofSeconds(5);
  private static final Duration GRACE = Duration.ofSeconds(5);
  private static final Duration FAILURE_PAUSE = Duration.ofMillis(100);
  private static final Duration CONVERGENCE_DEADLINE = Duration.ofSeconds(30);
  private static final int PORT_LOW = 20_000;
  private static final int PORT_HIGH = 27_000;
  private static final List<String> BACKEND_ADDRESSES = List.of("127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14");

  private final SoakOptions options;
  private final Path work;
  private final PrintStream out = System.out;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final List<Component> components = new ArrayList<>();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final SplittableRandom portRandom = new SplittableRandom(new SecureRandom().nextLong());
  private final java.util.Set<Integer> usedPorts = new java.util.HashSet<>();

  private Soak(SoakOptions options, Path work) {
    this.options = options;
    this.work = work;
  }

  public static void main(String[] args) throws Exception {
    // Before any HttpClient exists: the sidecar routes on Host, which the JDK client restricts.
    System.setProperty("jdk.httpclient.allowRestrictedHeaders", "host");
    SoakOptions options;
    try {
      options = SoakOptions.parse(args, new SecureRandom().nextLong() & 0xffff_ffffL);
    } catch (IllegalArgumentException e) {
      System.err.println("soak: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (!Files.isRegularFile(options.jar())) {
      System.err.println("soak: --jar " + options.jar() + " is not a file (build: mvn -B -q -pl cli -am package -DskipTests)");
      System.exit(2);
    }
    Path work = options.workDir() != null ? Files.createDirectories(options.workDir())
        : Files.createTempDirectory("portage-soak");
    int code;
    Soak soak = new Soak(options, work);
    try {
      code = soak.run();
    } catch (SetupException e) {
      System.err.println("soak: setup failed: " + e.getMessage() + " (logs in " + work + ")");
      code = 2;
    } finally {
      soak.cleanup();
    }
    System.exit(code);
  }

  /** The harness could not bring the components up; nothing was measured. */
  private static final class SetupException extends Exception {
    private static final long serialVersionUID = 1L;

    SetupException(String message) {
      super(message);
    }
  }

  private int run() throws Exception {
    double[] loadBefore = Sampler.loadAverage();
    out.printf("soak: seed %d, duration %s, %d workers, work dir %s, load average before %.2f %.2f %.2f%n",
        options.seed(), options.duration(), options.workers(), work, loadBefore[0], loadBefore[1], loadBefore[2]);

    // Harness-side servers.
    EchoServer echo = track(new EchoServer());
    int backendPort = startBackends();
    int apiPort = freePort();
    FakeApiServer api = track(new FakeApiServer(apiPort));
    api.start();

    // Ports, files and components.
    Path cpDir = work.resolve("manifests");
    Manifests manifests = new Manifests(cpDir, BACKEND_ADDRESSES, backendPort, options.seed() ^ 0x5eedL);
    manifests.writeInitial();
    int cpGrpc = freePort();
    int cpAdmin = freePort();
    int[] serverPorts = {freePort(), freePort()};
    int[] serverAgentPorts = {freePort(), freePort()};
    int[] serverHealth = {freePort(), freePort()};
    int[] serverAdmin = {freePort(), freePort()};
    RoundRobinForwarder lb = track(new RoundRobinForwarder(List.of(
        new InetSocketAddress("127.0.0.1", serverAgentPorts[0]), new InetSocketAddress("127.0.0.1", serverAgentPorts[1]))));
    int spPort = freePort();
    int spAdmin = freePort();
    Path endpointsFile = work.resolve("service-proxy.yaml");
    Files.writeString(endpointsFile, """
        services:
          - name: soak-web
            listen: 127.0.0.1:%d
            authority: soak-web%s
        """.formatted(spPort, Manifests.DOMAIN));
    int scPort = freePort();
    int scAdmin = freePort();
    int hubPort = freePort();
    int hubServe = freePort();
    int hubSecure = freePort();

    List<String> java = List.of(ProcessHandle.current().info().command().orElse("java"),
        "-Xms" + options.heap(), "-Xmx" + options.heap(), "-XX:+AlwaysPreTouch", "-XX:+ExitOnOutOfMemoryError", "--enable-native-access=ALL-UNNAMED",
        "-jar", options.jar().toAbsolutePath().toString());
    Path logs = Files.createDirectories(work.resolve("logs"));
    Component cp = component("control-plane", java, logs, cpAdmin, "/readyz", "control-plane", "--source", "files",
        "--dir", cpDir.toString(), "--grpc-bind-address", "127.0.0.1", "--grpc-port", "" + cpGrpc,
        "--admin-port", "" + cpAdmin);
    List<Component> servers = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      servers.add(component("server-" + (i + 1), java, logs, serverHealth[i], "/readyz", "server",
          "--mode", "http-connect", "--server-id", "soak-server-" + (i + 1), "--server-count", "2",
          "--server-bind-address", "127.0.0.1", "--server-port", "" + serverPorts[i],
          "--agent-bind-address", "127.0.0.1", "--agent-port", "" + serverAgentPorts[i],
          "--health-bind-address", "127.0.0.1", "--health-port", "" + serverHealth[i],
          "--admin-port", "" + serverAdmin[i]));
    }
    List<Component> agents = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      int health = freePort();
      agents.add(component("agent-" + (i + 1), java, logs, health, "/readyz", "agent",
          "--agent-id", "soak-agent-" + (i + 1), "--proxy-server-host", "127.0.0.1",
          "--proxy-server-port", "" + lb.port(), "--health-server-host", "127.0.0.1",
          "--health-server-port", "" + health, "--admin-server-port", "" + freePort()));
    }
    Component sp = component("service-proxy", java, logs, spAdmin, "/readyz", "service-proxy",
        "--endpoints-file", endpointsFile.toString(), "--destination-addr", "127.0.0.1:" + cpGrpc,
        "--admin-port", "" + spAdmin);
    Component sc = component("sidecar", java, logs, scAdmin, "/readyz", "sidecar",
        "--destination-addr", "127.0.0.1:" + cpGrpc, "--outbound-port", "" + scPort, "--admin-port", "" + scAdmin);
    Component hub = component("hub", java, logs, hubServe, "/v1/healthz", "hub",
        "--server-addr", "http://127.0.0.1:" + apiPort, "--proxy-port", "" + hubPort,
        "--proxy-secure-port", "" + hubSecure, "--serve-port", "" + hubServe,
        "--disk-cache-path", work.resolve("hub-cache").toString(), "--heartbeat-interval-seconds", "1",
        "--heartbeat-failed-retry", "2", "--heartbeat-healthy-threshold", "1");

    SoakClock clock = SoakClock.start(Ticker.system());
    for (Component c : List.of(cp, servers.get(0), servers.get(1), agents.get(0), agents.get(1), sp, sc, hub)) {
      c.start("initial", clock.now());
    }
    for (Component c : components) {
      if (!c.awaitReady(START_TIMEOUT, stop, clock)) {
        throw new SetupException(c.name + " not ready within " + START_TIMEOUT.toSeconds() + " s; log "
            + c.log() + ":\n" + String.join("\n", Sampler.tail(c.log(), 20)));
      }
    }
    out.println("soak: all components ready after " + SoakClock.format(clock.now()));

    // Clients, checked once each before the clock starts.
    List<InetSocketAddress> connectAddrs = List.of(new InetSocketAddress("127.0.0.1", serverPorts[0]),
        new InetSocketAddress("127.0.0.1", serverPorts[1]));
    Map<Traffic, PathStats> stats = new EnumMap<>(Traffic.class);
    for (Traffic t : Traffic.values()) {
      stats.put(t, new PathStats(t));
    }
    Targets targets = new Targets(connectAddrs, echo.port(), spPort, scPort, hubPort);
    preflight(targets, clock);

    // The soak proper.
    long duration = options.duration().toNanos();
    long warmup = Math.max(TimeUnit.SECONDS.toNanos(5), Math.min(TimeUnit.SECONDS.toNanos(30), duration / 10));
    SoakClock soakClock = SoakClock.start(Ticker.system());
    Sampler sampler = new Sampler(components, soakClock, out);
    // Series times are soak-relative from here on: the instances started before it count from 0.
    for (Component c : components) {
      c.series().newInstance(c.pid(), 0);
      c.series().ready(c.pid(), 0);
    }

    ScheduledExecutorService timers = Executors.newScheduledThreadPool(2,
        r -> Thread.ofPlatform().daemon().name("soak-timer").unstarted(r));
    track(timers::shutdownNow);
    timers.scheduleAtFixedRate(sampler::sample, 0, SAMPLE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    Path churnLog = work.resolve("churn.log");
    ScheduledFuture<?> churn = timers.scheduleAtFixedRate(() -> {
      try {
        String what = manifests.churn();
        Files.writeString(churnLog, SoakClock.format(soakClock.now()) + " " + what + "\n",
            StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      } catch (IOException e) {
        out.println("soak: churn failed: " + e);
      }
    }, options.churnInterval().toMillis(), options.churnInterval().toMillis(), TimeUnit.MILLISECONDS);
    ScheduledFuture<?> progress = timers.scheduleAtFixedRate(() -> progress(stats, soakClock), 30, 30, TimeUnit.SECONDS);

    Duration minGap = Duration.ofNanos(Math.min(TimeUnit.SECONDS.toNanos(10), duration / 6));
    Duration maxGap = Duration.ofNanos(Math.min(TimeUnit.SECONDS.toNanos(25), duration / 3));
    FaultInjector faults = new FaultInjector(agents.get(0), servers.get(1), cp, api, soakClock, options.seed(),
        minGap, maxGap, GRACE, out);
    Thread faultThread = Thread.ofPlatform().name("soak-faults").start(() ->
        faults.run(warmup, duration - TimeUnit.SECONDS.toNanos(15), stop));

    List<Thread> workers = startWorkers(targets, soakClock, stats);
    // Live heap of each component once warm (on a thread of its own: jcmd is slow under load).
    Thread heapBaseline = Thread.ofPlatform().name("soak-heap").start(() -> {
      try {
        if (!stop.await(warmup, TimeUnit.NANOSECONDS)) {
          liveHeaps(false);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    stop.await(duration, TimeUnit.NANOSECONDS);
    stop.countDown();
    progress.cancel(false);
    churn.cancel(false); // a change in progress completes first (Manifests is synchronized)
    out.println("soak: " + SoakClock.format(soakClock.now()) + " load stopped; waiting for workers");
    int stuck = 0;
    long joinDeadline = soakClock.now() + TimeUnit.SECONDS.toNanos(30);
    for (Thread w : workers) {
      long left = Math.max(1, joinDeadline - soakClock.now());
      if (!w.join(Duration.ofNanos(left))) {
        stuck++;
        out.println("soak: worker " + w.getName() + " still in a request: " + stackTop(w));
      }
    }
    faultThread.join(Duration.ofSeconds(90));
    List<ConvergenceCheck.Result> convergence = convergence(cp, manifests, spPort, scPort, soakClock);
    double[] loadEnd = Sampler.loadAverage();
    new CountDownLatch(1).await(5, TimeUnit.SECONDS); // let connections drain before the fd count
    sampler.settled();
    timers.shutdownNow();
    heapBaseline.join(Duration.ofSeconds(120));
    liveHeaps(true);

    // Clients before the servers they talk to, so a stop is not slowed by reconnect attempts.
    Map<String, Integer> exits = new LinkedHashMap<>();
    for (Component c : List.of(hub, sc, sp, agents.get(0), agents.get(1), servers.get(0), servers.get(1), cp)) {
      exits.put(c.name, c.stop(c.name.startsWith("agent") ? 2 : 1, Duration.ofSeconds(15)));
    }
    writeSamples(work.resolve("samples.csv"));

    String header = header(loadBefore, sampler.maxLoad(), loadEnd);
    SoakReport report = new SoakReport(new SoakReport.Inputs(header, new ArrayList<>(stats.values()), components,
        faults.windows(), sampler.crashes(), exits, warmup, manifests.changes(), stuck, convergence));
    out.println();
    out.println(report.markdown());
    if (options.reportTo() != null) {
      // Written whole, never appended: the results page keeps one current result, copied by hand.
      Files.writeString(options.reportTo(), report.markdown(), StandardCharsets.UTF_8);
      out.println("soak: report written to " + options.reportTo());
    }
    out.println("soak: logs, manifests, churn.log and samples.csv in " + work);
    return report.problems().isEmpty() ? 0 : 1;
  }

  private String header(double[] before, double maxLoad, double[] after) {
    String date = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
    return String.format(Locale.ROOT, """
        ## Soak %s — %s, seed %d%s

        %d workers (tunnel %d, service proxy %d, sidecar %d, hub %d), manifest churn every %s, child heap -Xmx%s,
        %d cores. Load average (1/5/15 min) before %.2f %.2f %.2f; highest 1-min during the run %.2f; at the end %.2f %.2f %.2f.
        """, date, human(options.duration()), options.seed(),
        options.label().isBlank() ? "" : " (" + options.label() + ")", options.workers(),
        share(Traffic.TUNNEL), share(Traffic.SERVICE_PROXY), share(Traffic.SIDECAR), share(Traffic.HUB),
        human(options.churnInterval()), options.heap(), Runtime.getRuntime().availableProcessors(),
        before[0], before[1], before[2], maxLoad, after[0], after[1], after[2]);
  }

  private static String human(Duration d) {
    long s = d.toSeconds();
    return s % 60 == 0 ? (s / 60) + " min" : s + " s";
  }

  /** Workers per path: 3/8 tunnel, 2/8 service proxy, 2/8 sidecar, the rest (at least 1) hub. */
  private int share(Traffic t) {
    int n = options.workers();
    int tunnel = Math.max(1, Math.round(n * 3 / 8f));
    int sp = Math.max(1, Math.round(n * 2 / 8f));
    int sc = Math.max(1, Math.round(n * 2 / 8f));
    return switch (t) {
      case TUNNEL -> tunnel;
      case SERVICE_PROXY -> sp;
      case SIDECAR -> sc;
      case HUB -> Math.max(1, n - tunnel - sp - sc);
    };
  }

  /** Where the workers send their requests. */
  private record Targets(List<InetSocketAddress> connect, int echoPort, int serviceProxyPort, int sidecarPort,
      int hubPort) {}

  /** A new client for one worker of path {@code t}, recording into {@code s}. */
  private Predicate<SplittableRandom> client(Traffic t, Targets to, PathStats s, SoakClock clock) {
    return switch (t) {
      case TUNNEL -> new TunnelClient(to.connect(), to.echoPort(), s, clock, (int) REQUEST_TIMEOUT.toMillis())::once;
      case SERVICE_PROXY -> track(new HttpGetClient("http://127.0.0.1:" + to.serviceProxyPort(),
          List.of(Manifests.WEB + Manifests.DOMAIN), s, clock, REQUEST_TIMEOUT))::once;
      case SIDECAR -> track(new HttpGetClient("http://127.0.0.1:" + to.sidecarPort(),
          List.of(Manifests.WEB + Manifests.DOMAIN, Manifests.SPLIT + Manifests.DOMAIN), s, clock, REQUEST_TIMEOUT))::once;
      case HUB -> track(new HubClient("http://127.0.0.1:" + to.hubPort(), s, clock, REQUEST_TIMEOUT))::once;
    };
  }

  private List<Thread> startWorkers(Targets targets, SoakClock clock, Map<Traffic, PathStats> stats) {
    List<Thread> workers = new ArrayList<>();
    int index = 0;
    for (Traffic t : Traffic.values()) {
      for (int i = 0; i < share(t); i++) {
        Predicate<SplittableRandom> client = client(t, targets, stats.get(t), clock);
        SplittableRandom random = new SplittableRandom(options.seed() * 31 + index++);
        workers.add(Thread.ofPlatform().name("soak-" + t.name().toLowerCase(Locale.ROOT) + "-" + i).start(() -> {
          try {
            while (stop.getCount() > 0) {
              // A failed request is followed by a short pause: a refused port fails in microseconds,
              // and a busy loop on it would only burn the CPU the components need to recover.
              if (!client.test(random)) {
                stop.await(FAILURE_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
              }
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }));
      }
    }
    return workers;
  }

  /** Each path must work once before the soak starts (up to 60 s), else the setup is wrong. */
  private void preflight(Targets targets, SoakClock clock) throws SetupException, InterruptedException {
    for (Traffic t : Traffic.values()) {
      PathStats s = new PathStats(t);
      Predicate<SplittableRandom> client = client(t, targets, s, clock);
      SplittableRandom random = new SplittableRandom(1);
      long deadline = clock.now() + TimeUnit.SECONDS.toNanos(60);
      while (clock.now() < deadline && !client.test(random)) {
        stop.await(500, TimeUnit.MILLISECONDS);
      }
      if (s.succeeded() == 0) {
        List<PathStats.Failure> f = s.failures();
        throw new SetupException(t.label + " never worked; last failure: "
            + (f.isEmpty() ? "none" : f.get(f.size() - 1).reason()));
      }
    }
    out.println("soak: every path answered once; starting the clock");
  }

  private void progress(Map<Traffic, PathStats> stats, SoakClock clock) {
    StringBuilder b = new StringBuilder("soak: " + SoakClock.format(clock.now()));
    b.append(String.format(Locale.ROOT, " load %.2f |", Sampler.loadAverage()[0]));
    for (PathStats s : stats.values()) {
      b.append(' ').append(s.traffic.name().toLowerCase(Locale.ROOT)).append(' ').append(s.succeeded())
          .append('/').append(s.attempted());
    }
    out.println(b);
  }

  private static String stackTop(Thread t) {
    StackTraceElement[] st = t.getStackTrace();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < Math.min(6, st.length); i++) {
      b.append(i == 0 ? "" : " < ").append(st[i]);
    }
    return b.toString();
  }

  private Component component(String name, List<String> java, Path logs, int readyPort, String readyPath,
      String... args) {
    Component c = new Component(name, java, List.of(args), logs,
        URI.create("http://127.0.0.1:" + readyPort + readyPath));
    components.add(c);
    return c;
  }

  /** Starts one demo backend per loopback address, all on one port (retrying with another port). */
  private int startBackends() throws IOException, SetupException {
    for (int attempt = 0; attempt < 10; attempt++) {
      int port = freePort();
      List<DemoHttpBackend> started = new ArrayList<>();
      try {
        for (String a : BACKEND_ADDRESSES) {
          started.add(new DemoHttpBackend(a, port));
        }
        started.forEach(this::track);
        return port;
      } catch (BindException e) {
        started.forEach(DemoHttpBackend::close);
      }
    }
    throw new SetupException("no port free on all of " + BACKEND_ADDRESSES);
  }

  /** Pins soak-web to one backend and checks that sidecar and service proxy follow (see {@link ConvergenceCheck}). */
  private List<ConvergenceCheck.Result> convergence(Component cp, Manifests manifests, int spPort, int scPort,
      SoakClock clock) throws IOException, InterruptedException {
    if (!cp.awaitReady(Duration.ofSeconds(60), new CountDownLatch(1), clock)) {
      out.println("soak: control plane not ready for the convergence check");
    }
    String pinned = manifests.pinWeb();
    String authority = Manifests.WEB + Manifests.DOMAIN;
    List<ConvergenceCheck.Result> results = new ArrayList<>();
    results.add(ConvergenceCheck.await("sidecar", "http://127.0.0.1:" + scPort, authority, pinned, false,
        CONVERGENCE_DEADLINE, clock));
    results.add(ConvergenceCheck.await("service proxy", "http://127.0.0.1:" + spPort, authority, pinned, true,
        CONVERGENCE_DEADLINE, clock));
    for (ConvergenceCheck.Result r : results) {
      out.printf(Locale.ROOT, "soak: convergence: %s %s after %.1f s (last answer from %s)%n", r.proxy(),
          r.converged() ? "converged" : "DID NOT converge", r.afterNanos() / 1e9, r.lastSeen());
    }
    return results;
  }

  /** Live heap after a full GC of every live component, recorded as its baseline or end figure. */
  private void liveHeaps(boolean end) {
    for (Component c : components) {
      long pid = c.pid();
      if (c.alive()) {
        long bytes = LiveHeap.measure(pid);
        if (bytes >= 0) {
          c.series().liveHeap(pid, bytes, end);
        }
      }
    }
  }

  private void writeSamples(Path csv) throws IOException {
    List<String> lines = new ArrayList<>(List.of("component,t_seconds,pid,rss_kib,threads,fds"));
    for (Component c : components) {
      for (ProcSample s : c.series().all()) {
        lines.add(String.format(Locale.ROOT, "%s,%.1f,%d,%d,%d,%d", c.name, s.atNanos() / 1e9, s.pid(),
            s.rssBytes() / 1024, s.threads(), s.fds()));
      }
    }
    Files.write(csv, lines);
  }

  /**
   * A port free right now on 127.0.0.1, below Linux's ephemeral range (32768+): the kernel's port-0
   * choices come from that range, where any process's outgoing connection may take the port before
   * a component (or its restart) binds it.
   */
  private int freePort() throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = PORT_LOW + portRandom.nextInt(PORT_HIGH - PORT_LOW);
      if (!usedPorts.add(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (IOException e) {
        // taken: try another
      }
    }
    throw new IOException("no free port in " + PORT_LOW + ".." + PORT_HIGH);
  }

  private <T extends AutoCloseable> T track(T c) {
    closeables.add(c);
    return c;
  }

  private void cleanup() {
    stop.countDown();
    for (Component c : components) {
      if (c.alive()) {
        try {
          c.stop(c.name.startsWith("agent") ? 2 : 1, Duration.ofSeconds(5));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        // closing everything regardless
      }
    }
  }
}
