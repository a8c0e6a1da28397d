package dev.portage.bench.serviceproxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The service proxy benchmark (run by {@code bench/service-proxy-bench.sh}, which builds the node
 * and pod network namespaces and starts this inside the node's). Measures, in one run:
 *
 * <ol>
 *   <li>data plane: iperf3 from a client pod to a server pod directly, through a ClusterIP in
 *       nftables mode, through a ClusterIP in userspace mode (our relay), and through HAProxy on the
 *       node (a userspace relay as shipped);
 *   <li>first-packet connect latency to a ClusterIP with 10 and with N Services;
 *   <li>programming: N Services × 10 endpoints created while the proxy runs (time from the last
 *       creation to the last Service answering), and from an empty table (process start to the last
 *       Service answering, plus the proxy's own full-sync time);
 *   <li>one new Service reachable after its EndpointSlice arrives, with N present;
 *   <li>the proxy's heap after a full GC with N Services × 10 endpoints.
 * </ol>
 * Prints a markdown table and writes {@code key,value,unit} rows to the CSV file given.
 */
public final class ServiceProxyBench {

  private static final String SERVER_IP = "10.244.0.11";
  private static final String NODE_IP = "192.168.100.2";
  private static final String IPERF_IP = "10.96.0.5";
  private static final String PROBE_IP = "10.96.0.6";
  private static final int ROUNDS = 3;
  /** Connect latency from the client pod: python's socket module, the same client for both counts. */
  private static final String CONNECT_PROBE = """
      import socket, struct, sys, time
      host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
      samples = []
      for _ in range(n):
          s = socket.socket()
          s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
          t = time.perf_counter_ns()
          s.connect((host, port))
          samples.append(time.perf_counter_ns() - t)
          s.close()
      samples.sort()
      print(samples[n // 2] / 1000, samples[n * 99 // 100] / 1000)
      """;

  private final Path jar;
  private final String clientNs;
  private final int services;
  private final int duration;
  private final int warmup;
  private final Map<String, String[]> results = new LinkedHashMap<>();

  private ServiceProxyBench(Path jar, String clientNs, int services, int duration, int warmup) {
    this.jar = jar;
    this.clientNs = clientNs;
    this.services = services;
    this.duration = duration;
    this.warmup = warmup;
  }

  /**
   * Arguments: portage.jar, client namespace, Services, iperf3 seconds, warm-up seconds, raw CSV
   * path, parts, plot CSV directory, note (date and load) for the plots.
   */
  public static void main(String[] args) throws Exception {
    if (args.length < 9) {
      System.err.println("usage: ServiceProxyBench PORTAGE_JAR CLIENT_NS SERVICES DURATION WARMUP RAW_CSV PARTS PLOT_DIR NOTE");
      System.exit(2);
    }
    ServiceProxyBench bench = new ServiceProxyBench(Path.of(args[0]), args[1], Integer.parseInt(args[2]),
        Integer.parseInt(args[3]), Integer.parseInt(args[4]));
    List<String> parts = Arrays.asList(args[6].split("[ ,]+"));
    try (ApiServer api = new ApiServer()) {
      api.service("iperf", IPERF_IP, 5201);
      api.slice("iperf", List.of(SERVER_IP), 5201);
      api.service("probe", PROBE_IP, 80);
      api.slice("probe", List.of(SERVER_IP), 8080);
      if (parts.contains("dataplane")) {
        bench.dataPlane(api);
      }
      if (parts.contains("scale")) {
        bench.scale(api);
      }
    }
    bench.report(Path.of(args[5]), Path.of(args[7]), args[8]);
    System.exit(0); // the mock server's threads are not daemons
  }

  private void dataPlane(ApiServer api) throws Exception {
    // Each path runs ROUNDS times, interleaved with the direct path, and reports medians: one 10 s
    // iperf3 run on a shared 2-core machine varies by 10-20 %.
    List<Double> direct = new ArrayList<>();
    Map<String, List<Double>> paths = new LinkedHashMap<>();
    for (String mode : List.of("nftables", "userspace")) {
      try (ProxyProcess proxy = ProxyProcess.start(jar, api.kubeconfig(), mode, "512m")) {
        awaitReachable(PROBE_IP, 80, Duration.ofSeconds(60), proxy);
        for (int round = 0; round < ROUNDS; round++) {
          direct.add(iperf(SERVER_IP, 5201));
          paths.computeIfAbsent("clusterip_" + mode, k -> new ArrayList<>()).add(iperf(IPERF_IP, 5201));
        }
      }
      deleteTable();
    }
    Path cfg = Files.createTempFile("haproxy", ".cfg");
    Files.writeString(cfg, """
        global
          maxconn 1000
        defaults
          mode tcp
          timeout connect 5s
          timeout client 1m
          timeout server 1m
        listen iperf
          bind %s:15201
          server s1 %s:5201
        """.formatted(NODE_IP, SERVER_IP));
    Process haproxy = new ProcessBuilder("haproxy", "-f", cfg.toString(), "-db").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      // Not a connection: HAProxy would open one to iperf3 -s, which then counts it as a test client.
      for (int i = 0; i < 200 && ProxyProcess.run(List.of("ss", "-Hltn", "sport = :15201")).isBlank(); i++) {
        Thread.sleep(25);
      }
      for (int round = 0; round < ROUNDS; round++) {
        direct.add(iperf(SERVER_IP, 5201));
        paths.computeIfAbsent("haproxy", k -> new ArrayList<>()).add(iperf(NODE_IP, 15201));
      }
    } finally {
      haproxy.destroy();
      haproxy.waitFor();
      Files.deleteIfExists(cfg);
    }
    double directMedian = median(direct);
    put("iperf3_direct", directMedian, "Gbit/s");
    paths.forEach((path, runs) -> {
      put("iperf3_" + path, median(runs), "Gbit/s");
      put("iperf3_" + path + "_vs_direct", median(runs) / directMedian, "x");
    });
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  private void scale(ApiServer api) throws Exception {
    try (ProxyProcess proxy = ProxyProcess.start(jar, api.kubeconfig(), "nftables", "256m")) {
      api.fakeServices("small", 0, 8, 10); // with iperf and probe: 10 Services
      awaitReachable(PROBE_IP, 80, Duration.ofSeconds(60), proxy);
      Thread.sleep(3000); // let the sync of the last creations land before sampling
      double[] small = connectLatencies(PROBE_IP, 80, 2000);
      put("connect_p50_us_10_services", small[0], "us");
      put("connect_p99_us_10_services", small[1], "us");

      long created0 = System.nanoTime();
      api.fakeServices("big", 8, services - 11, 10);
      String lastIp = ApiServer.clusterIp(services + 1000);
      api.service("last", lastIp, 80);
      api.slice("last", List.of(SERVER_IP), 8080);
      long lastCreated = System.nanoTime();
      awaitReachable(lastIp, 80, Duration.ofMinutes(10), proxy);
      put("create_" + services + "_services_s", (lastCreated - created0) / 1e9, "s");
      put("reachable_after_last_created_s", (System.nanoTime() - lastCreated) / 1e9, "s");
      Thread.sleep(3000);
      double[] big = connectLatencies(PROBE_IP, 80, 2000);
      put("connect_p50_us_" + services + "_services", big[0], "us");
      put("connect_p99_us_" + services + "_services", big[1], "us");
      put("connect_p50_ratio", big[0] / small[0], "x");

      List<Double> news = new ArrayList<>();
      List<Double> nftMs = new ArrayList<>();
      List<Double> syncMs = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String ip = ApiServer.clusterIp(services + 2000 + i);
        api.service("new-" + i, ip, 80);
        Thread.sleep(3000); // rules for the Service without endpoints (reject) land; tokens refill
        String before = proxy.metrics();
        long t = System.nanoTime();
        api.slice("new-" + i, List.of(SERVER_IP), 8080);
        awaitReachable(ip, 80, Duration.ofSeconds(30), proxy);
        news.add((System.nanoTime() - t) / 1e6);
        Thread.sleep(200);
        String after = proxy.metrics();
        nftMs.add(1000 * delta(before, after, "portage_service_proxy_nft_apply_seconds"));
        syncMs.add(1000 * delta(before, after, "kubeproxy_sync_partial_proxy_rules_duration_seconds"));
      }
      news.sort(null);
      nftMs.sort(null);
      syncMs.sort(null);
      put("new_service_reachable_ms_median", news.get(news.size() / 2), "ms");
      put("new_service_reachable_ms_max", news.get(news.size() - 1), "ms");
      put("new_service_sync_ms_median", syncMs.get(syncMs.size() / 2), "ms");
      put("new_service_nft_ms_median", nftMs.get(nftMs.size() / 2), "ms");
      put("heap_used_after_gc_mib", proxy.heapUsedAfterGcMib(), "MiB");
      String metrics = proxy.metrics();
      put("partial_sync_seconds_sum", ProxyProcess.value(metrics, "kubeproxy_sync_partial_proxy_rules_duration_seconds_sum"), "s");
    }
    deleteTable();
    long start = System.nanoTime();
    try (ProxyProcess proxy = ProxyProcess.start(jar, api.kubeconfig(), "nftables", "256m")) {
      awaitReachable(ApiServer.clusterIp(services + 1000), 80, Duration.ofMinutes(10), proxy);
      put("cold_start_to_reachable_s", (System.nanoTime() - start) / 1e9, "s");
      // The rules answer a moment before the sync records its duration: wait for the metric.
      double fullSync = -1;
      for (int i = 0; i < 100 && fullSync < 0; i++) {
        fullSync = ProxyProcess.value(proxy.metrics(), "kubeproxy_sync_full_proxy_rules_duration_seconds_sum");
        if (fullSync <= 0) {
          fullSync = -1;
          Thread.sleep(50);
        }
      }
      put("cold_full_sync_s", fullSync, "s");
      put("cold_heap_used_after_gc_mib", proxy.heapUsedAfterGcMib(), "MiB");
    }
    deleteTable();
  }

  /** Mean of histogram {@code name} over the observations between two scrapes, in seconds. */
  private static double delta(String before, String after, String name) {
    double sum = ProxyProcess.value(after, name + "_sum") - ProxyProcess.value(before, name + "_sum");
    double count = ProxyProcess.value(after, name + "_count") - ProxyProcess.value(before, name + "_count");
    return count <= 0 ? -1 : sum / count;
  }

  /** iperf3 from the client pod: a warm-up run, then the measured one; Gbit/s received. */
  private double iperf(String host, int port) throws Exception {
    if (warmup > 0) {
      ProxyProcess.run(List.of("ip", "netns", "exec", clientNs, "iperf3", "-c", host, "-p", "" + port,
          "-t", "" + warmup, "-J"));
    }
    String json = ProxyProcess.run(List.of("ip", "netns", "exec", clientNs, "iperf3", "-c", host, "-p", "" + port,
        "-t", "" + duration, "-J"));
    JsonNode root = new ObjectMapper().readTree(json);
    return root.path("end").path("sum_received").path("bits_per_second").asDouble() / 1e9;
  }

  /**
   * p50 and p99 of TCP connect() from the client pod to {@code host:port}, in microseconds: the
   * first packet of each connection goes through the node's nat-prerouting lookup.
   */
  private double[] connectLatencies(String host, int port, int samples) throws Exception {
    String[] out = ProxyProcess.run(List.of("ip", "netns", "exec", clientNs, "python3", "-c", CONNECT_PROBE,
        host, Integer.toString(port), Integer.toString(samples))).strip().split("\\s+");
    return new double[] {Double.parseDouble(out[0]), Double.parseDouble(out[1])};
  }

  /** Waits until a TCP connection to {@code host:port} from the node succeeds. */
  private static void awaitReachable(String host, int port, Duration limit, ProxyProcess proxy) throws Exception {
    long deadline = System.nanoTime() + limit.toNanos();
    InetSocketAddress target = new InetSocketAddress(host, port);
    while (System.nanoTime() < deadline) {
      try (Socket socket = new Socket()) {
        socket.connect(target, 50);
        return;
      } catch (ConnectException | SocketTimeoutException | java.net.NoRouteToHostException e) {
        if (proxy != null && !proxy.alive()) {
          throw new IOException("the proxy exited; its log: " + proxy.log());
        }
        Thread.sleep(1);
      }
    }
    throw new IOException(host + ":" + port + " not reachable within " + limit
        + (proxy == null ? "" : "; proxy log: " + proxy.log()));
  }

  private static void deleteTable() throws Exception {
    ProxyProcess.run(List.of("sh", "-c", "nft delete table ip portage-proxy 2>/dev/null; true"));
  }

  private void put(String key, double value, String unit) {
    String shown = String.format(value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.3f", value);
    results.put(key, new String[] {shown, unit});
    System.out.println(key + " = " + shown + " " + unit);
  }

  /**
   * Writes every figure as {@code key,value,unit} to {@code raw}, and the comparisons the plots show
   * to {@code plots}/service-proxy-*.csv in the plot tool's format.
   */
  private void report(Path raw, Path plots, String note) throws IOException {
    StringBuilder out = new StringBuilder("key,value,unit\n");
    results.forEach((key, v) -> out.append(key).append(',').append(v[0]).append(',').append(v[1]).append('\n'));
    Files.writeString(raw, out.toString());
    System.out.println("\n| measure | value |\n|---|---|");
    results.forEach((key, v) -> System.out.println("| " + key + " | " + v[0] + " " + v[1] + " |"));
    if (results.containsKey("iperf3_clusterip_nftables") && results.containsKey("iperf3_haproxy")) {
      Files.writeString(plots.resolve("service-proxy-throughput.csv"), String.join("\n",
          "# title: Service proxy: iperf3 through a ClusterIP, pod to pod (median of 3)",
          "# y: Gbit/s (higher is better)",
          "# note: " + note + "; target: nftables >= 0.9x direct",
          "path,Portage nftables,Portage userspace,HAProxy (userspace),direct",
          "1 stream," + plain("iperf3_clusterip_nftables") + "," + plain("iperf3_clusterip_userspace") + ","
              + plain("iperf3_haproxy") + "," + plain("iperf3_direct"), ""));
    }
    if (results.containsKey("connect_p50_us_10_services")) {
      Files.writeString(plots.resolve("service-proxy-connect-latency.csv"), String.join("\n",
          "# title: Service proxy (nftables): TCP connect to a ClusterIP from a pod",
          "# y: microseconds (lower is better)",
          "# note: " + note + "; target: p50 at " + services + " <= 1.1x p50 at 10",
          "Services,p50,p99",
          "10," + plain("connect_p50_us_10_services") + "," + plain("connect_p99_us_10_services"),
          services + "," + plain("connect_p50_us_" + services + "_services") + ","
              + plain("connect_p99_us_" + services + "_services"), ""));
    }
  }

  private String plain(String key) {
    return results.get(key)[0];
  }

}
