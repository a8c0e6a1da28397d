package dev.portage.bench.tunnel;

import ch.qos.logback.classic.Level;
import io.grpc.ManagedChannel;
import dev.portage.core.net.NettyTransport;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loopback comparison of direct TCP, the Portage tunnel (HTTP CONNECT and gRPC frontends, each with
 * its own server and agent JVM) and {@code ssh -L}: single-stream and 32-stream throughput, dial
 * latency, and many idle tunnels through one agent with the server's heap. Prints a Markdown report.
 * Run through {@code bench/tunnel-bench.sh}, which builds the jar and starts a private sshd.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.portage.bench.tunnel.TunnelBenchmark \
 *     [--sshd-port P --ssh-key FILE [--ssh-user U]] [--bytes MiB] [--dials N] [--idle N] [--logs DIR]
 *     [--routes direct,connect,grpc,grpc1,ssh] [--queue-mib N] [--warmup-mib N] [--jit-rounds N]
 *     [--warmup-dials N] [--sshd-pid PID] [--grpc-window BYTES] [--go-client BINARY] [--go-cpuprofile FILE]
 *     [--go-heap-mib N] [--tls-key ec|rsa] [--tls-groups LIST] [--get-dials N] [--get-warmup N] [--nginx BINARY]
 * </pre>
 *
 * <p>Route {@code connect-tls} (not in the default set) is HTTP CONNECT with TLS on both hops: the
 * client's connection to the frontend and the agent's link to the server (a server and an agent JVM
 * of its own, certificates from {@link BenchPki}); its client is {@link TlsConn} (BoringSSL, a full
 * handshake per connection). With it the report adds a GET table ({@code --get-dials}, default 2000 per
 * route): sequential connect + one {@code GET /} to nginx ({@link NginxPeer}) straight, through the
 * plaintext tunnel and through the TLS one (full handshake, and resumed), with one TLS handshake + GET
 * straight to nginx as the floor.
 *
 * <p>Route {@code grpcgo} (not in the default set) is the gRPC frontend with a grpc-go client, as
 * kube-apiserver's konnectivity client is: the {@code --go-client} binary ({@code e2e/konnectivity-go},
 * built by the script) in its own process, one connection, a Proxy stream per dial ({@link GoClient}).
 * It uses the gRPC route's server and agent; its client CPU is the Go process's. {@code --go-heap-mib}
 * gives the Go process that much live heap, so its GC runs as rarely per byte as in kube-apiserver.
 *
 * <p>Each route is warmed up first ({@code --warmup-mib}, default 1024: that many MiB on one stream,
 * half of it over 32 streams, 300 dials). The relay JVMs' JIT compilers otherwise take 25-65 % of a
 * core each during the measured transfers (128 MiB was not enough), which measures JIT warm-up, not
 * the data path; {@code ssh -L} needs none.
 */
public final class TunnelBenchmark {
  private static final long MIB = 1024 * 1024;

  private TunnelBenchmark() {}

  /** Blocks of the interleaved dial phase ({@link DialRounds}). */
  private static final int DIAL_BLOCKS = 20;

  private record Row(String route, double single, double parallel, DialRounds.Result dial) {}

  public static void main(String[] args) throws Exception {
    ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);
    Map<String, String> opt = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    long bytes = Long.parseLong(opt.getOrDefault("bytes", "1024")) * MIB;
    int dials = Integer.parseInt(opt.getOrDefault("dials", "2000"));
    int idle = Integer.parseInt(opt.getOrDefault("idle", "10000"));
    int parallel = 32;
    long warmup = Long.parseLong(opt.getOrDefault("warmup-mib", "1024")) * MIB;
    int jitRounds = Integer.parseInt(opt.getOrDefault("jit-rounds", "8"));
    int warmupDials = Integer.parseInt(opt.getOrDefault("warmup-dials", "20000"));
    List<String> only = List.of(opt.getOrDefault("routes", "direct,connect,grpc,ssh").split(","));
    Path logs = Path.of(opt.getOrDefault("logs", Files.createTempDirectory("tunnel-bench").toString()));
    String loadBefore = loadAverage();

    List<AutoCloseable> closeables = new ArrayList<>();
    try {
      ChildJvm backend = track(closeables, new ChildJvm(logs, "1g", "backend"));
      int backendPort = (int) backend.await("port");
      String target = "127.0.0.1:" + backendPort;

      // --queue-mib raises both servers' per-connection queue toward the client (default 4 MiB), the
      // bound beyond which a connection is closed (see docs/tunnel.md, overflow rule).
      String queue = opt.get("queue-mib");
      String suffix = queue == null ? "" : " (queue " + queue + " MiB)";
      ChildJvm connectServer = track(closeables, new ChildJvm(logs, "1g",
          queue == null ? new String[] {"server", "http-connect"} : new String[] {"server", "http-connect", queue}));
      int connectAgentPort = (int) connectServer.await("agentPort");
      int connectPort = (int) connectServer.await("serverPort");
      ChildJvm connectAgent = track(closeables, new ChildJvm(logs, "1g", "agent", Integer.toString(connectAgentPort)));
      connectAgent.await("ready");

      // Route connect-tls: HTTP CONNECT with TLS on the frontend and on the agent link. --tls-groups LIST
      // sets the key-exchange groups of both relays and of the harness's TLS client (nginx, the floor, is
      // not told: Debian's OpenSSL 3.0 can only do X25519 of the client's default list anyway).
      boolean tls = only.contains("connect-tls");
      List<String> tlsGroups = opt.containsKey("tls-groups") ? List.of(opt.get("tls-groups").split(",")) : List.of();
      List<String> groupsArg = tlsGroups.isEmpty() ? List.of() : List.of("groups=" + opt.get("tls-groups"));
      BenchPki pki = tls ? BenchPki.create(logs.resolve("pki"), opt.getOrDefault("tls-key", "ec")) : null;
      ChildJvm tlsServer = null;
      ChildJvm tlsAgent = null;
      int tlsPort = -1;
      if (tls) {
        List<String> serverArgs = new ArrayList<>(List.of("server", "http-connect"));
        if (queue != null) {
          serverArgs.add(queue);
        }
        serverArgs.add("tls=" + pki.dir());
        serverArgs.addAll(groupsArg);
        tlsServer = track(closeables, new ChildJvm(logs, "1g", serverArgs.toArray(String[]::new)));
        int tlsAgentPort = (int) tlsServer.await("agentPort");
        tlsPort = (int) tlsServer.await("serverPort");
        List<String> agentArgs = new ArrayList<>(List.of("agent", Integer.toString(tlsAgentPort), "tls=" + pki.dir()));
        agentArgs.addAll(groupsArg);
        tlsAgent = track(closeables, new ChildJvm(logs, "1g", agentArgs.toArray(String[]::new)));
        tlsAgent.await("ready");
      }

      ChildJvm grpcServer = track(closeables, new ChildJvm(logs, "1g",
          queue == null ? new String[] {"server", "grpc"} : new String[] {"server", "grpc", queue}));
      int grpcAgentPort = (int) grpcServer.await("agentPort");
      int grpcPort = (int) grpcServer.await("serverPort");
      ChildJvm grpcAgent = track(closeables, new ChildJvm(logs, "1g", "agent", Integer.toString(grpcAgentPort)));
      grpcAgent.await("ready");
      // The gRPC clients' transport: one harness-owned loop (so a dial can start its call there and send
      // HEADERS and DIAL_REQ in one write), callbacks on it (they only queue and notify: the client then
      // wakes the caller thread directly, as the socket routes' blocking reads do), retries off (nothing
      // keeps a sent message), and the HTTP/2 window (--grpc-window; 0 = grpc-java's default, 1 MiB
      // with BDP auto-tuning, whose PINGs a fixed window turns off).
      int grpcWindow = Integer.parseInt(opt.getOrDefault("grpc-window", "0"));
      EventLoopGroup grpcLoop = NettyTransport.NIO.newEventLoopGroup(1, "bench-grpc-client");
      closeables.add(() -> grpcLoop.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync());
      Executor grpcThread = grpcLoop.next();
      Supplier<ManagedChannel> grpcChannels = () -> {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(new InetSocketAddress("127.0.0.1", grpcPort))
            .usePlaintext().eventLoopGroup(grpcLoop).channelType(NettyTransport.NIO.channelType())
            .directExecutor().disableRetry();
        if (grpcWindow > 0) {
          b.flowControlWindow(grpcWindow);
        }
        return b.build();
      };
      ManagedChannel channel = grpcChannels.get();
      closeables.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));

      // The server registers a client connection on its agent stream's loop only once the agent is connected
      // (AgentAffinityGroup); the agent JVM says "ready" before that. A client connection made earlier lands
      // on the other loop and every packet crosses threads inside the server: +0.6 CPU-s/GiB on the server
      // and twice the context switches per dial, measured with the grpc-go client. So a throwaway
      // channel dials until the agent is there, before the shared channel or the grpc-go client connects.
      awaitUsable(Route.grpcSingleUse("gRPC agent", grpcChannels, grpcThread, target));
      GoClient goClient = null;
      if (only.contains("grpcgo")) {
        String binary = opt.get("go-client");
        if (binary == null) {
          throw new IllegalArgumentException("--routes grpcgo needs --go-client BINARY (bench/tunnel-bench.sh builds it)");
        }
        String profile = opt.get("go-cpuprofile");
        int heapMiB = Integer.parseInt(opt.getOrDefault("go-heap-mib", "0"));
        goClient = track(closeables, new GoClient(Path.of(binary), grpcPort, target, grpcWindow, heapMiB,
            profile == null ? null : Path.of(profile), logs));
      }

      List<Route> routes = new ArrayList<>();
      // ssh -L's relays are processes: ssh in the server's column, sshd's session processes in the agent's
      Route sshRouteRef = null;
      Supplier<Map<String, List<Long>>> sshPids = Map::of;
      Route connect = Route.httpConnect("Portage tunnel, HTTP CONNECT" + suffix, connectPort, target);
      Route grpc = Route.grpc("Portage tunnel, gRPC" + suffix, channel, grpcThread, target);
      Route grpcSingle = Route.grpcSingleUse("Portage tunnel, gRPC, channel per dial" + suffix, grpcChannels,
          grpcThread, target);
      Route direct = Route.tcp("direct TCP", backendPort);
      routes.add(direct);
      // The processes a dial on each route wakes, besides the client: counted per dial.
      Map<Route, Supplier<List<Long>>> processes = new HashMap<>();
      processes.put(direct, () -> DialRounds.pids(backend.pid()));
      processes.put(connect, () -> DialRounds.pids(connectServer.pid(), connectAgent.pid(), backend.pid()));
      processes.put(grpc, () -> DialRounds.pids(grpcServer.pid(), grpcAgent.pid(), backend.pid()));
      processes.put(grpcSingle, processes.get(grpc));
      if (only.contains("connect")) {
        routes.add(connect);
      }
      Route connectTls = null;
      if (tls) {
        TlsConn.Client tlsClient = TlsConn.Client.fullHandshake(pki.ca(), tlsGroups);
        connectTls = Route.httpConnectTls("Portage tunnel, HTTP CONNECT, TLS both hops ("
            + tlsClient.negotiatedGroup(tlsPort) + ")" + suffix, tlsClient, tlsPort, target);
        routes.add(connectTls);
        ChildJvm s = tlsServer;
        ChildJvm a = tlsAgent;
        processes.put(connectTls, () -> DialRounds.pids(s.pid(), a.pid(), backend.pid()));
      }
      if (only.contains("grpc")) {
        routes.add(grpc);
      }
      if (only.contains("grpc1")) {
        routes.add(grpcSingle);
      }
      Route grpcGo = null;
      if (goClient != null) {
        grpcGo = Route.grpcGo("Portage tunnel, gRPC, grpc-go client" + suffix, goClient);
        routes.add(grpcGo);
        processes.put(grpcGo, processes.get(grpc));
      }
      if (opt.containsKey("sshd-port") && only.contains("ssh")) {
        SshForward ssh = track(closeables, new SshForward(Integer.parseInt(opt.get("sshd-port")),
            Path.of(opt.get("ssh-key")), opt.getOrDefault("ssh-user", System.getProperty("user.name")),
            backendPort, logs.resolve("ssh.log")));
        Route sshRoute = Route.tcp("ssh -L", ssh.localPort());
        routes.add(sshRoute);
        long sshdPid = Long.parseLong(opt.getOrDefault("sshd-pid", "-1"));
        sshPids = () -> Map.of("server", List.of(ssh.pid()), "agent", ProcessHandle.of(sshdPid).stream()
            .flatMap(ProcessHandle::descendants).map(ProcessHandle::pid).toList());
        sshRouteRef = sshRoute;
        processes.put(sshRoute, () -> {
          List<Long> pids = DialRounds.pids(ssh.pid(), backend.pid());
          // sshd's per-login processes (the forwarding runs in them), when the script told us its pid
          ProcessHandle.of(sshdPid).ifPresent(h -> h.descendants().forEach(d -> pids.add(d.pid())));
          return pids;
        });
      }
      for (Route r : routes) {
        awaitUsable(r);
      }

      // CPU-seconds per GiB of each JVM during the measured single stream: far less noisy than Gbit/s
      // on a shared box (the client is this JVM).
      Map<String, Map<String, ChildJvm>> jvms = new HashMap<>(Map.of(
          connect.name(), Map.of("server", connectServer, "agent", connectAgent, "backend", backend),
          grpc.name(), Map.of("server", grpcServer, "agent", grpcAgent, "backend", backend),
          grpcSingle.name(), Map.of("server", grpcServer, "agent", grpcAgent, "backend", backend)));
      if (grpcGo != null) {
        jvms.put(grpcGo.name(), jvms.get(grpc.name()));
      }
      if (connectTls != null) {
        jvms.put(connectTls.name(), Map.of("server", tlsServer, "agent", tlsAgent, "backend", backend));
      }
      // The client's CPU is the harness's own, except on the grpc-go route.
      Map<Route, Long> clientPids = new HashMap<>();
      if (grpcGo != null) {
        clientPids.put(grpcGo, goClient.pid());
      }
      StringBuilder cpu = new StringBuilder();
      Map<Route, double[]> throughput = new LinkedHashMap<>();
      for (Route r : routes) {
        System.err.println("== " + r.name());
        measureSafely(r.name() + " warm-up", () -> r.throughput(warmup, 1)); // JIT, buffers
        measureSafely(r.name() + " warm-up", () -> r.throughput(warmup / 2, parallel));
        measureSafely(r.name() + " warm-up", () -> r.dialLatencies(300)[0]);
        settleJit(r, jvms.get(r.name()), jitRounds, parallel);
        CpuMeter meter = new CpuMeter(clientPids.getOrDefault(r, ProcessHandle.current().pid()),
            jvms.getOrDefault(r.name(), Map.of("backend", backend)),
            r == sshRouteRef ? sshPids.get() : Map.of());
        double single = measureSafely(r.name() + " 1 stream", () -> r.throughput(bytes, 1));
        cpu.append("| ").append(r.name()).append(" | ").append(meter.perGib(bytes)).append(" |\n");
        double multi = measureSafely(r.name() + " " + parallel + " streams", () -> r.throughput(bytes, parallel));
        throughput.put(r, new double[] {single, multi});
        System.err.printf(Locale.ROOT, "   1 stream %.2f Gbit/s, %d streams %.2f Gbit/s%n", single / 1e9, parallel, multi / 1e9);
      }
      // The dial path (CONNECT parsing, DIAL_REQ/DIAL_RSP, connect, close) is other code than the
      // transfers': 300 dials left the relays' C2 compilers busy through the measured dials.
      System.err.println("== dial warm-up, " + warmupDials + " per route");
      DialRounds.run(routes, Map.of(), warmupDials, DIAL_BLOCKS);
      System.err.println("== dials, all routes interleaved");
      long[] gcBefore = DialRounds.clientGc();
      Map<Route, DialRounds.Result> dialResults = DialRounds.run(routes, processes, dials, DIAL_BLOCKS);
      long[] gcAfter = DialRounds.clientGc();
      List<Row> rows = new ArrayList<>();
      for (Route r : routes) {
        rows.add(new Row(r.name(), throughput.get(r)[0], throughput.get(r)[1], dialResults.get(r)));
      }

      StringBuilder report = new StringBuilder();
      report.append(table(rows, bytes, parallel, dials));
      report.append("\nCPU-seconds per GiB during the 1-stream transfer (/proc/<pid>/stat utime+stime; the client is ")
          .append("the harness JVM, on the grpc-go route the Go process; on ssh -L the server and agent columns are ssh and ")
          .append("sshd's session processes):\n\n")
          .append("| route | ").append(CpuMeter.HEADER).append(" |\n|---|---|---|\n").append(cpu);
      report.append('\n').append(dialTable(rows));
      report.append(String.format(Locale.ROOT, "%nClient JVM during the dial phase: %d collections, %d ms of GC.%n",
          gcAfter[0] - gcBefore[0], gcAfter[1] - gcBefore[1]));
      if (tls && Integer.parseInt(opt.getOrDefault("get-dials", "2000")) > 0) {
        ChildJvm s = tlsServer;
        ChildJvm a = tlsAgent;
        report.append('\n').append(getPhase(opt, tlsGroups, pki, logs, connectPort, tlsPort,
            () -> DialRounds.pids(connectServer.pid(), connectAgent.pid()), () -> DialRounds.pids(s.pid(), a.pid())));
      }
      if (idle > 0) {
        report.append('\n').append(idleReport(connect, connectServer, connectAgent, idle));
        report.append('\n').append(idleReport(grpc, grpcServer, grpcAgent, idle));
      }
      report.append('\n').append("Load average (1/5/15 min) before: ").append(loadBefore)
          .append("; after: ").append(loadAverage()).append(". Cores: ")
          .append(Runtime.getRuntime().availableProcessors()).append(".\n");
      System.out.print(report);
    } finally {
      for (int i = closeables.size() - 1; i >= 0; i--) {
        try {
          closeables.get(i).close();
        } catch (Exception e) {
          System.err.println("closing: " + e);
        }
      }
    }
  }

  /**
   * Sequential connect + one {@code GET /} to nginx, interleaved across: nginx straight (plaintext, TLS
   * with a full handshake = the floor, TLS resumed), and through the plaintext and the TLS HTTP CONNECT
   * tunnels (full handshake, resumed). After {@code --get-warmup} (5000) dials per route. Per dial also
   * the context switches and CPU of nginx and, on the tunnel routes, of the relays.
   */
  private static String getPhase(Map<String, String> opt, List<String> groups, BenchPki pki, Path logs,
      int connectPort, int tlsPort,
      Supplier<List<Long>> plainRelays, Supplier<List<Long>> tlsRelays) throws Exception {
    int dials = Integer.parseInt(opt.getOrDefault("get-dials", "2000"));
    int warmup = Integer.parseInt(opt.getOrDefault("get-warmup", "5000"));
    try (NginxPeer nginx = new NginxPeer(Path.of(opt.getOrDefault("nginx", "/usr/sbin/nginx")), pki,
        logs.resolve("nginx"))) {
      String target = "127.0.0.1:" + nginx.plainPort();
      TlsConn.Client full = TlsConn.Client.fullHandshake(pki.ca(), groups);
      TlsConn.Client resuming = TlsConn.Client.resuming(pki.ca(), groups);
      String floorGroup = full.negotiatedGroup(nginx.tlsPort());
      String tunnelGroup = full.negotiatedGroup(tlsPort);
      Route floor = Route.get("nginx, TLS (the floor)", () -> full.connect(nginx.tlsPort()));
      List<Route> gets = List.of(
          Route.get("nginx, plaintext", () -> SocketConn.connect(nginx.plainPort())),
          floor,
          Route.get("nginx, TLS resumed", () -> resuming.connect(nginx.tlsPort())),
          Route.get("Portage HTTP CONNECT, plaintext", () -> SocketConn.httpConnect(connectPort, target)),
          Route.get("Portage HTTP CONNECT, TLS both hops", () -> SocketConn.tunnel(full.connect(tlsPort), target)),
          Route.get("Portage HTTP CONNECT, TLS both hops, resumed",
              () -> SocketConn.tunnel(resuming.connect(tlsPort), target)));
      Map<Route, Supplier<List<Long>>> processes = new HashMap<>();
      for (Route r : gets) {
        Supplier<List<Long>> relays = r.name().startsWith("Portage") && r.name().contains("TLS") ? tlsRelays
            : r.name().startsWith("Portage") ? plainRelays : ArrayList::new;
        processes.put(r, () -> {
          List<Long> pids = new ArrayList<>(relays.get());
          pids.addAll(nginx.pids());
          return pids;
        });
      }
      for (Route r : gets) {
        awaitUsable(r);
      }
      System.err.println("== GET warm-up, " + warmup + " per route");
      DialRounds.run(gets, Map.of(), warmup, DIAL_BLOCKS);
      System.err.println("== GETs, all routes interleaved");
      Map<Route, DialRounds.Result> results = DialRounds.run(gets, processes, dials, DIAL_BLOCKS);
      long[] floorSorted = results.get(floor).sorted();
      StringBuilder sb = new StringBuilder();
      sb.append(String.format(Locale.ROOT, "GET: %d sequential connect + one GET / (a 3-byte 200 from nginx) per route, "
          + "in %d blocks interleaved across the routes, after %d per route of warm-up. TLS: %s key, the client is "
          + "BoringSSL (netty-tcnative) offering key-exchange groups %s; negotiated: %s with nginx, %s with the "
          + "Portage frontend.%n%n", dials, DIAL_BLOCKS, warmup, opt.getOrDefault("tls-key", "ec"),
          groups.isEmpty() ? "(BoringSSL's default, X25519MLKEM768 first)" : String.join(",", groups),
          floorGroup, tunnelGroup));
      sb.append("| route | p50 ms | p99 ms | p99.9 ms | max ms | p99 vs floor | context switches / dial | CPU ms / dial |\n");
      sb.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (Route r : gets) {
        DialRounds.Result res = results.get(r);
        long[] l = res.sorted();
        sb.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.3f | %.3f | %s | %.1f | %.2f |%n", r.name(),
            Workloads.percentile(l, 50) / 1e6, Workloads.percentile(l, 99) / 1e6, Workloads.percentile(l, 99.9) / 1e6,
            l[l.length - 1] / 1e6, ratio(Workloads.percentile(l, 99), Workloads.percentile(floorSorted, 99)),
            res.switchesPerDial(), res.cpuMillisPerDial()));
      }
      return sb.toString();
    }
  }

  /** A relay JVM that spent less than this on JIT compilation during a settle round counts as warm. */
  private static final double SETTLED_JIT_SECONDS = 0.25;

  /**
   * After the fixed warm-up, up to {@code rounds} more rounds (512 MiB on one stream, 256 MiB over
   * {@code parallel}) until the relays' JIT compiler threads use less than {@link #SETTLED_JIT_SECONDS}
   * in a round: with 1 GiB of warm-up they still took ~45 % of the relays' CPU during the measured
   * stream, which measures compilation, not the data path. Routes without relays skip this.
   */
  private static void settleJit(Route r, Map<String, ChildJvm> relays, int rounds, int parallel) {
    if (relays == null) {
      return;
    }
    for (int i = 1; i <= rounds; i++) {
      double before = relays.get("server").jitCpuSeconds() + relays.get("agent").jitCpuSeconds();
      measureSafely(r.name() + " JIT settle", () -> r.throughput(512 * MIB, 1));
      measureSafely(r.name() + " JIT settle", () -> r.throughput(256 * MIB, parallel));
      double jit = relays.get("server").jitCpuSeconds() + relays.get("agent").jitCpuSeconds() - before;
      System.err.printf(Locale.ROOT, "   JIT settle round %d: relays compiled for %.2f CPU-s%n", i, jit);
      if (!(jit >= SETTLED_JIT_SECONDS)) {
        return; // settled (or /proc unreadable: NaN)
      }
    }
    System.err.println("   JIT not settled after " + rounds + " rounds; measuring anyway");
  }

  private interface Measurement {
    double run() throws Exception;
  }

  /** A failed measurement is reported (NaN in the table, the reason on stderr) instead of ending the run. */
  private static double measureSafely(String what, Measurement m) {
    try {
      return m.run();
    } catch (Exception e) {
      System.err.println("   " + what + " FAILED: " + e.getMessage());
      return Double.NaN;
    }
  }

  private static <T extends AutoCloseable> T track(List<AutoCloseable> list, T t) {
    list.add(t);
    return t;
  }

  /** The agents connect on their own schedule: retry the first dial for up to 30 s. */
  private static void awaitUsable(Route r) throws Exception {
    IOException last = null;
    for (int i = 0; i < 300; i++) {
      try {
        r.dialLatencies(1);
        return;
      } catch (IOException e) {
        last = e;
        TimeUnit.MILLISECONDS.sleep(100);
      }
    }
    throw new IOException(r.name() + " is not usable", last);
  }

  private static String table(List<Row> rows, long bytes, int parallel, int dials) {
    Row ssh = rows.stream().filter(r -> r.route().equals("ssh -L")).findFirst().orElse(null);
    Row direct = rows.get(0);
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT,
        "Throughput: %d MiB from the backend to the client (one stream, then split over %d streams). "
            + "Dial: %d sequential connect + 1-byte echo round trips per route, in %d blocks interleaved "
            + "across the routes.%n%n", bytes / MIB, parallel, dials, DIAL_BLOCKS));
    sb.append("| route | 1 stream Gbit/s | vs ssh -L | vs direct | ").append(parallel)
        .append(" streams Gbit/s | vs ssh -L | vs direct |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT, "| %s | %.2f | %s | %s | %.2f | %s | %s |%n",
          r.route(), r.single() / 1e9, ratio(r.single(), ssh == null ? 0 : ssh.single()),
          ratio(r.single(), direct.single()), r.parallel() / 1e9,
          ratio(r.parallel(), ssh == null ? 0 : ssh.parallel()), ratio(r.parallel(), direct.parallel())));
    }
    return sb.toString();
  }

  /**
   * Dial latency percentiles, their ratios, and per dial the context switches and CPU time of the
   * processes on the route besides the client (relays and backend; for ssh -L the ssh client and
   * sshd's session processes).
   */
  private static String dialTable(List<Row> rows) {
    Row ssh = rows.stream().filter(r -> r.route().equals("ssh -L")).findFirst().orElse(null);
    Row direct = rows.get(0);
    StringBuilder sb = new StringBuilder();
    sb.append("| route | dial p50 ms | p99 ms | p99.9 ms | max ms | p50 vs ssh -L | p99 vs ssh -L | p99 vs direct "
        + "| context switches / dial | CPU ms / dial | of which JIT |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      long[] l = r.dial().sorted();
      long p50 = Workloads.percentile(l, 50);
      long p99 = Workloads.percentile(l, 99);
      sb.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %.3f | %.3f | %s | %s | %s | %.1f | %.2f | %.2f |%n",
          r.route(), p50 / 1e6, p99 / 1e6, Workloads.percentile(l, 99.9) / 1e6, l[l.length - 1] / 1e6,
          ratio(p50, ssh == null ? 0 : Workloads.percentile(ssh.dial().sorted(), 50)),
          ratio(p99, ssh == null ? 0 : Workloads.percentile(ssh.dial().sorted(), 99)),
          ratio(p99, Workloads.percentile(direct.dial().sorted(), 99)),
          r.dial().switchesPerDial(), r.dial().cpuMillisPerDial(), r.dial().jitMillisPerDial()));
    }
    return sb.toString();
  }

  private static String ratio(double a, double b) {
    return b <= 0 ? "–" : String.format(Locale.ROOT, "%.2f×", a / b);
  }

  private static String idleReport(Route route, ChildJvm server, ChildJvm agent, int n) throws Exception {
    long serverBefore = server.heapAfterGc();
    long agentBefore = agent.heapAfterGc();
    long rssBefore = server.rss();
    List<Conn> open = Workloads.openIdle(route, n, 32);
    long serverWith = server.heapAfterGc();
    long agentWith = agent.heapAfterGc();
    long rssWith = server.rss();
    for (Conn c : open) {
      try {
        c.close();
      } catch (IOException e) {
        // counted below through the heap
      }
    }
    TimeUnit.SECONDS.sleep(2); // let both ends finish closing before the last heap reading
    long serverAfter = server.heapAfterGc();
    return String.format(Locale.ROOT,
        "Idle tunnels, %s: %d of %d opened through one agent. Server heap after GC: %.1f MiB before, "
            + "%.1f MiB with them open (%.2f KiB per tunnel), %.1f MiB after closing them; server RSS %.0f → %.0f MiB. "
            + "Agent heap: %.1f → %.1f MiB.%n",
        route.name(), open.size(), n, serverBefore / (double) MIB, serverWith / (double) MIB,
        open.isEmpty() ? 0 : (serverWith - serverBefore) / 1024.0 / open.size(), serverAfter / (double) MIB,
        rssBefore / (double) MIB, rssWith / (double) MIB, agentBefore / (double) MIB, agentWith / (double) MIB);
  }

  private static String loadAverage() {
    try {
      String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return parts[0] + " / " + parts[1] + " / " + parts[2];
    } catch (IOException e) {
      return "unknown";
    }
  }
}
