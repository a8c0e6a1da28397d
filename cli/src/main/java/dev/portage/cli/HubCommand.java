package dev.portage.cli;

import dev.portage.cli.flags.KlogOptions;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.EdgeHub;
import dev.portage.hub.EdgeHubConfig;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.remote.Upstreams;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code portage hub}: the edge hub with YurtHub's flag names and defaults, so scripts written for
 * YurtHub run against it. YurtHub flags the hub does not implement are accepted by name and refused
 * with "not supported yet". SIGTERM or SIGINT closes the hub and exits 0.
 */
@Command(
    name = "hub",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Edge hub: reverse proxy to the API servers with a disk cache that answers while the cloud is unreachable (YurtHub).")
public final class HubCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(HubCommand.class);

  /** klog's flags, as upstream manifests pass them. */
  @Mixin KlogOptions klog = new KlogOptions();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--server-addr", required = true, split = ",", description = "API server URLs, comma separated (http:// or https://).")
  List<String> serverAddr;

  @Option(names = "--lb-mode", defaultValue = "rr", description = "Load balancing over healthy API servers: rr or priority (first healthy in --server-addr order).")
  String lbMode;

  @Option(names = "--bind-address", defaultValue = "127.0.0.1", description = "Address of the proxy ports and the hub server.")
  String bindAddress;

  @Option(names = "--proxy-port", defaultValue = "10261", description = "Plain HTTP proxy port for node components.")
  int proxyPort;

  @Option(names = "--proxy-secure-port", defaultValue = "10268", description = "TLS proxy port; opened only with --tls-cert-file and --tls-private-key-file.")
  int proxySecurePort;

  @Option(names = "--serve-port", defaultValue = "10267", description = "Hub server port: /v1/healthz, /v1/readyz, /metrics, POST /v1/token.")
  int servePort;

  @Option(names = "--disk-cache-path", defaultValue = "/etc/kubernetes/cache/", description = "Cache directory.")
  Path diskCachePath;

  @Option(names = "--heartbeat-interval-seconds", defaultValue = "10", description = "Seconds between health checks of one API server.")
  int heartbeatIntervalSeconds;

  @Option(names = "--heartbeat-timeout-seconds", defaultValue = "2", description = "Seconds a health check may take.")
  int heartbeatTimeoutSeconds;

  @Option(names = "--heartbeat-healthy-threshold", defaultValue = "2", description = "Consecutive successes that make a server healthy again.")
  int heartbeatHealthyThreshold;

  @Option(names = "--heartbeat-failed-retry", defaultValue = "3", description = "Consecutive failures that make a server unhealthy.")
  int heartbeatFailedRetry;

  @Option(names = "--max-requests-in-flight", defaultValue = "250", description = "Non-watch requests in flight before 429.")
  int maxRequestsInFlight;

  @Option(names = "--min-request-timeout", defaultValue = "1800s", converter = GoDuration.class, description = "Offline watches end after this x U[1,2) (Go duration).")
  Duration minRequestTimeout;

  @Option(names = "--cache-agents", split = ",", description = "Extra components to cache (User-Agent up to '/'); '*' for all. Always cached: kubelet, kube-proxy, flanneld, coredns.")
  List<String> cacheAgents = new ArrayList<>();

  @Option(names = "--ca-file", description = "CA of the API servers' certificates (default: the JDK trust store).")
  Path caFile;

  @Option(names = "--client-cert-file", description = "Client certificate presented to the API servers.")
  Path clientCertFile;

  @Option(names = "--client-key-file", description = "Private key of --client-cert-file.")
  Path clientKeyFile;

  @Option(names = "--tls-cert-file", description = "Server certificate of the secure proxy port (Portage flag).")
  Path tlsCertFile;

  @Option(names = "--tls-private-key-file", description = "Private key of --tls-cert-file (Portage flag).")
  Path tlsPrivateKeyFile;

  @Option(names = "--join-token", defaultValue = "", description = "Bootstrap token sent on requests without credentials (update at runtime with POST /v1/token).")
  String joinToken;

  /** YurtHub flags the hub does not implement: accepted by name so the error can say so. */
  @Option(names = {"--node-name", "--nodepool-name", "--working-mode", "--kubeconfig",
      "--enable-resource-filter", "--disabled-resource-filters", "--hub-cert-organizations",
      "--enable-dummy-if", "--enable-iptables", "--dummy-if-ip", "--hub-cert-dir",
      "--root-dir", "--gc-frequency", "--enable-node-pool", "--access-server-through-hub"},
      hidden = true, arity = "0..1")
  List<String> unsupported;

  @Override
  public Integer call() throws Exception {
    StopSignals signals = StopSignals.install(log);
    EdgeHubConfig config = toConfig();
    ScheduledExecutorService scheduler = TimeSource.newTimer("portage-hub-timer");
    try (EdgeHub hub = new EdgeHub(config, TimeSource.system(scheduler), PrometheusRegistry.defaultRegistry)) {
      hub.start();
      signals.await(null);
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  /** The hub settings the flags describe; throws IllegalArgumentException (exit 2) on bad input. */
  EdgeHubConfig toConfig() {
    CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
    if (parsed != null && unsupported != null) {
      for (String arg : parsed.originalArgs()) {
        String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        for (CommandLine.Model.OptionSpec o : spec.options()) {
          if (o.hidden() && List.of(o.names()).contains(name)) {
            throw new IllegalArgumentException(name + ": not supported yet");
          }
        }
      }
    }
    Upstreams.LbMode mode = switch (lbMode) {
      case "rr" -> Upstreams.LbMode.RR;
      case "priority" -> Upstreams.LbMode.PRIORITY;
      default -> throw new IllegalArgumentException(
          "--lb-mode: " + lbMode + " (expected: rr or priority)");
    };
    Set<String> agents = new HashSet<>(CachePolicy.DEFAULT_COMPONENTS);
    for (String a : cacheAgents) {
      if (!a.isBlank()) {
        agents.add(a.trim());
      }
    }
    if (heartbeatIntervalSeconds < 1 || heartbeatTimeoutSeconds < 1) {
      throw new IllegalArgumentException("--heartbeat-interval-seconds and --heartbeat-timeout-seconds: "
          + heartbeatIntervalSeconds + ", " + heartbeatTimeoutSeconds + " (expected: >= 1)");
    }
    if (heartbeatHealthyThreshold < 1 || heartbeatFailedRetry < 1) {
      throw new IllegalArgumentException("--heartbeat-healthy-threshold and --heartbeat-failed-retry: "
          + heartbeatHealthyThreshold + ", " + heartbeatFailedRetry + " (expected: >= 1)");
    }
    Upstreams.Heartbeat heartbeat = new Upstreams.Heartbeat(
        Duration.ofSeconds(heartbeatIntervalSeconds), Duration.ofSeconds(heartbeatTimeoutSeconds),
        heartbeatHealthyThreshold, heartbeatFailedRetry);
    return new EdgeHubConfig(serverAddr, mode, bindAddress, proxyPort, proxySecurePort, servePort,
        diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, agents, caFile,
        clientCertFile, clientKeyFile, tlsCertFile, tlsPrivateKeyFile, joinToken, "");
  }
}
