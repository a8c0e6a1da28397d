package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small cluster node built from real kernel objects, for the tests that need a kernel data plane.
 * The test JVM itself runs in a private network namespace (Surefire starts it through {@code
 * src/test/netns/bin/java}, {@code unshare --net}): that namespace is the node. Each pod is a network
 * namespace of its own ({@code ip netns add}) joined to the node's bridge {@code br0}
 * (10.244.0.1/24) by a veth pair, with the bridge as its default gateway; the node has a default
 * route through an uplink veth (its "primary" address, 192.168.100.2, for NodePorts). Pods run
 * socat servers that answer every TCP connection and UDP datagram with their name.
 *
 * <p>{@link #close()} kills every process and deletes every pod namespace; a shutdown hook does the
 * same if the JVM dies first. Namespace names carry this JVM's pid, so concurrent runs never meet.
 */
final class NetnsLab implements AutoCloseable {

  static final String NODE_IP = "192.168.100.2";
  static final String GATEWAY = "10.244.0.1";
  private static final AtomicInteger COUNTER = new AtomicInteger();

  private final List<String> namespaces = new ArrayList<>();
  private final List<Process> processes = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();
  private final Thread hook = new Thread(this::cleanUp, "netns-lab-cleanup");
  private final String prefix = "ptg" + ProcessHandle.current().pid() + "-";

  private NetnsLab() {}

  /**
   * Builds the node: bridge, uplink, forwarding on.
   *
   * @throws AssertionError with a clear message when not root or not in a private network namespace
   */
  static NetnsLab start() throws IOException, InterruptedException {
    requirePrivateNamespace();
    NetnsLab lab = new NetnsLab();
    Runtime.getRuntime().addShutdownHook(lab.hook);
    try {
      lab.sh("ip link add br0 type bridge && ip addr add " + GATEWAY + "/24 dev br0 && ip link set br0 up"
          + " && ip link add up0 type veth peer name up1 && ip addr add " + NODE_IP + "/24 dev up0"
          + " && ip link set up1 up && ip link set up0 up && ip route add default via 192.168.100.1 dev up0"
          + " && sysctl -qw net.ipv4.ip_forward=1");
    } catch (IOException | RuntimeException | Error e) {
      lab.close();
      throw e;
    }
    return lab;
  }

  /**
   * Fails with a clear message unless this JVM is root inside the private namespace the test wrapper
   * made: these tests program nftables and must never touch the machine's own network.
   */
  static void requirePrivateNamespace() throws IOException, InterruptedException {
    if (!"1".equals(System.getenv("PORTAGE_PRIVATE_NETNS"))) {
      String uid = run(List.of("id", "-u")).strip();
      fail(("0".equals(uid) ? "this JVM is not in the private network namespace these tests need"
              : "kernel data plane tests need root (uid here: " + uid + ")")
          + ": they run in a private network namespace made by proxy/src/test/netns/bin/java (unshare"
          + " --net), as root, through Maven's netns execution (mvn -pl proxy -am verify, or bin/test)");
    }
  }

  /** Adds a pod namespace at {@code ip} (in 10.244.0.0/24) and returns its name. */
  String pod(String name, String ip) throws IOException, InterruptedException {
    int n = COUNTER.incrementAndGet();
    String ns = prefix + name;
    String veth = "veth" + n;
    sh("ip netns add " + ns);
    namespaces.add(ns);
    sh("ip link add " + veth + " type veth peer name eth0 netns " + ns
        + " && ip link set " + veth + " master br0 up"
        // what the kubelet's hairpin-veth mode does, so a pod can reach itself through a Service
        + " && bridge link set dev " + veth + " hairpin on"
        + " && ip netns exec " + ns + " sh -c 'ip link set lo up && ip addr add " + ip + "/24 dev eth0"
        + " && ip link set eth0 up && ip route add default via " + GATEWAY + "'");
    return ns;
  }

  /**
   * The pods of the two-Service scenario ({@link KubeObjects#createTwoWebServices}): a1 (10.244.0.11)
   * and a2 (.12) answering "a1"/"a2" on TCP 8080, b1 (.21) answering "b1" on 9090, and a client c1
   * (.99).
   *
   * @return the pods' namespaces: a1, a2, b1, c1
   */
  String[] webPods() throws IOException, InterruptedException {
    String[] pods = {pod("a1", "10.244.0.11"), pod("a2", "10.244.0.12"), pod("b1", "10.244.0.21"),
        pod("c1", "10.244.0.99")};
    tcpServer(pods[0], 8080, "a1");
    tcpServer(pods[1], 8080, "a2");
    tcpServer(pods[2], 9090, "b1");
    return pods;
  }

  /** Starts a TCP server in {@code ns} on {@code port} answering each connection with {@code reply}. */
  void tcpServer(String ns, int port, String reply) throws IOException, InterruptedException {
    // -t 10: the client half-closes at once; without it socat gives the forked echo only 0.5 s to
    // answer after that, which a loaded machine misses (an empty answer).
    background(List.of("ip", "netns", "exec", ns, "socat", "-t", "10",
        "TCP-LISTEN:" + port + ",fork,reuseaddr", "SYSTEM:echo " + reply));
    awaitListening(ns, "ss -Htln sport = :" + port);
  }

  /** Starts a UDP server in {@code ns} on {@code port} answering each datagram with {@code reply}. */
  void udpServer(String ns, int port, String reply) throws IOException, InterruptedException {
    background(List.of("ip", "netns", "exec", ns, "socat",
        "UDP-RECVFROM:" + port + ",fork,reuseaddr", "SYSTEM:echo " + reply));
    awaitListening(ns, "ss -Huln sport = :" + port);
  }

  /**
   * Connects from pod {@code ns} to {@code host:port} over TCP and returns the first line answered,
   * or {@code "ERROR: ..."} with socat's complaint (e.g. connection refused).
   */
  String tcpFrom(String ns, String host, int port) throws IOException, InterruptedException {
    // Sends nothing: a server closing with unread input would reset the connection, and the reset
    // can overtake its answer. -t 10: stdin ends at once, and socat's default 0.5 s wait for the
    // other direction after that is shorter than a loaded machine's forked echo takes (an empty
    // answer); -T 5 still ends a connection that goes silent.
    return exchange("", List.of("ip", "netns", "exec", ns, "socat", "-t", "10", "-T", "5", "-",
        "TCP:" + host + ":" + port + ",connect-timeout=2"));
  }

  /** Sends one UDP datagram from pod {@code ns} and returns the first line answered, or an error. */
  String udpFrom(String ns, String host, int port) throws IOException, InterruptedException {
    return exchange("hello\n", List.of("ip", "netns", "exec", ns, "socat", "-T2", "-", "UDP:" + host + ":" + port));
  }

  /** The first lines answered to {@code tries} TCP connections from pod {@code ns}, as a set. */
  java.util.Set<String> answers(String ns, String host, int port, int tries) throws IOException, InterruptedException {
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < tries; i++) {
      seen.add(tcpFrom(ns, host, port));
    }
    return seen;
  }

  /**
   * Lets fake time pass on {@code clock} (so the proxy's rate-limited sync runs) until {@code
   * condition} holds on the real network, for at most 20 s.
   */
  static void awaitTrue(dev.portage.core.time.FakeClock clock, java.util.concurrent.Callable<Boolean> condition) {
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .pollInterval(java.time.Duration.ofMillis(50)).until(() -> {
          clock.advance(java.time.Duration.ofSeconds(1));
          return condition.call();
        });
  }

  /** Runs {@code command} in the node's namespace (this JVM's) and returns its output. */
  String sh(String command) throws IOException, InterruptedException {
    return run(List.of("sh", "-c", command));
  }

  private String exchange(String send, List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).start();
    try {
      p.getOutputStream().write(send.getBytes(StandardCharsets.UTF_8));
      p.getOutputStream().close();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        return "ERROR: timeout";
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!out.isEmpty()) {
        return out.lines().findFirst().orElse("");
      }
      return "ERROR: " + new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    } finally {
      p.destroyForcibly();
    }
  }

  private void background(List<String> command) throws IOException {
    Path log = Files.createTempFile("netns-lab", ".log");
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    synchronized (processes) {
      processes.add(p);
      logs.add(log);
    }
  }

  private void awaitListening(String ns, String ss) throws IOException, InterruptedException {
    for (int i = 0; i < 100; i++) {
      if (!run(List.of("ip", "netns", "exec", ns, "sh", "-c", ss)).isBlank()) {
        return;
      }
      Thread.sleep(20); // waiting for a child process to bind, not for time to pass
    }
    fail("server in " + ns + " did not start listening (" + ss + ")");
  }

  static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " failed: " + out.strip());
    }
    return out;
  }

  @Override
  public void close() {
    cleanUp();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook runs anyway
    }
  }

  private void cleanUp() {
    synchronized (processes) {
      for (Process p : processes) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
      for (Process p : processes) {
        try {
          p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      processes.clear();
      for (Path log : logs) {
        try {
          Files.deleteIfExists(log);
        } catch (IOException e) {
          System.err.println("netns lab: cannot delete " + log + ": " + e.getMessage());
        }
      }
      logs.clear();
    }
    for (String ns : namespaces) {
      try {
        run(List.of("ip", "netns", "del", ns));
      } catch (IOException | InterruptedException e) {
        System.err.println("netns lab: cannot delete namespace " + ns + ": " + e.getMessage());
      }
    }
    namespaces.clear();
    // The node is this JVM's own private namespace: put it back as it was for the next test.
    try {
      sh("ip link del br0 2>/dev/null; ip link del up0 2>/dev/null; nft flush ruleset; true");
    } catch (IOException | InterruptedException e) {
      System.err.println("netns lab: cannot reset the node: " + e.getMessage());
    }
  }
}
