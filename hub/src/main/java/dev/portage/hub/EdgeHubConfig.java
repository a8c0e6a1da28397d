package dev.portage.hub;

import dev.portage.hub.bootstrap.NodeBootstrap;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.remote.ApiServer;
import dev.portage.hub.remote.Upstreams;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Settings of an {@link EdgeHub}, one field per {@code portage hub} flag (YurtHub names in
 * parentheses). Immutable; validated on construction. {@link #builder} or {@link #defaults} make
 * one; {@link #toBuilder} a changed copy.
 *
 * @param serverAddrs API server URLs ({@code --server-addr}); all http or all https
 * @param lbMode {@code --lb-mode}
 * @param bindAddress address of the hub server ({@code --bind-address})
 * @param proxyBindAddress address of the proxy listeners ({@code --bind-proxy-address})
 * @param proxyPort plain HTTP proxy port ({@code --proxy-port}, 10261); 0 picks a free port
 * @param proxySecurePort TLS proxy port ({@code --proxy-secure-port}, 10268); only opened when the
 *     hub has a server certificate
 * @param servePort hub server port ({@code --serve-port}, 10267): /v1/healthz, /v1/readyz,
 *     /metrics, POST /v1/token, /debug/pprof/ with {@code profiling}
 * @param diskCachePath cache root ({@code --disk-cache-path})
 * @param heartbeat {@code --heartbeat-interval-seconds}, {@code --heartbeat-timeout-seconds},
 *     {@code --heartbeat-healthy-threshold}, {@code --heartbeat-failed-retry}
 * @param maxRequestsInFlight {@code --max-requests-in-flight}; watches are not counted
 * @param minRequestTimeout {@code --min-request-timeout}; offline watches end after this × U[1,2)
 * @param cacheAgents components whose responses are cached, {@code *} for all ({@code
 *     --cache-agents} plus YurtHub's defaults)
 * @param caFile CA of the API servers' certificates; null: see {@link NodeBootstrap}
 * @param clientCertFile client certificate to the API servers; null: see {@link NodeBootstrap}
 * @param clientKeyFile key of {@code clientCertFile}
 * @param tlsCertFile server certificate of the secure proxy port; null: see {@link NodeBootstrap}
 * @param tlsKeyFile key of {@code tlsCertFile}
 * @param bootstrapToken token sent to the API servers on requests without {@code Authorization}
 *     ({@code --join-token}); "" for none (updated at runtime by {@code POST /v1/token})
 * @param nodeName the node the hub runs on ({@code --node-name}): the kubelet's cache holds only
 *     this Node and its Lease, and its Lease renewals and node status updates are answered
 *     locally while the cloud is unreachable; "" for none
 * @param workingMode {@code --working-mode}
 * @param nodePoolName the node pool of the node ({@code --nodepool-name}); "" for none
 * @param namespace where the {@code yurt-hub-cfg} ConfigMap lives ({@code --namespace}): its
 *     {@code cache_agents} adds components to cache; "" to not read it
 * @param profiling {@code --profiling}: thread dumps on {@code /debug/pprof/} of the hub server
 * @param bootstrap where credentials not given as flags come from ({@code --root-dir}, {@code
 *     --bootstrap-file}, {@code --bootstrap-mode}, {@code --discovery-token-ca-cert-hash})
 */
public record EdgeHubConfig(
    List<String> serverAddrs,
    Upstreams.LbMode lbMode,
    String bindAddress,
    String proxyBindAddress,
    int proxyPort,
    int proxySecurePort,
    int servePort,
    Path diskCachePath,
    Upstreams.Heartbeat heartbeat,
    int maxRequestsInFlight,
    Duration minRequestTimeout,
    Set<String> cacheAgents,
    Path caFile,
    Path clientCertFile,
    Path clientKeyFile,
    Path tlsCertFile,
    Path tlsKeyFile,
    String bootstrapToken,
    String nodeName,
    WorkingMode workingMode,
    String nodePoolName,
    String namespace,
    boolean profiling,
    NodeBootstrap bootstrap) {

  public EdgeHubConfig {
    serverAddrs = List.copyOf(Objects.requireNonNull(serverAddrs, "serverAddrs"));
    if (serverAddrs.isEmpty()) {
      throw new IllegalArgumentException("server-addr: empty (expected: at least one API server URL)");
    }
    long https = serverAddrs.stream().map(ApiServer::parse).filter(ApiServer::tls).count();
    if (https != 0 && https != serverAddrs.size()) {
      throw new IllegalArgumentException(
          "server-addr: " + serverAddrs + " (expected: all http:// or all https://)");
    }
    Objects.requireNonNull(lbMode, "lbMode");
    Objects.requireNonNull(bindAddress, "bindAddress");
    Objects.requireNonNull(proxyBindAddress, "proxyBindAddress");
    port("proxy-port", proxyPort);
    port("proxy-secure-port", proxySecurePort);
    port("serve-port", servePort);
    Objects.requireNonNull(diskCachePath, "diskCachePath");
    Objects.requireNonNull(heartbeat, "heartbeat");
    if (maxRequestsInFlight < 1) {
      throw new IllegalArgumentException(
          "max-requests-in-flight: " + maxRequestsInFlight + " (expected: >= 1)");
    }
    Objects.requireNonNull(minRequestTimeout, "minRequestTimeout");
    if (minRequestTimeout.isNegative() || minRequestTimeout.isZero()) {
      throw new IllegalArgumentException(
          "min-request-timeout: " + minRequestTimeout + " (expected: > 0)");
    }
    cacheAgents = Set.copyOf(Objects.requireNonNull(cacheAgents, "cacheAgents"));
    if ((clientCertFile == null) != (clientKeyFile == null)) {
      throw new IllegalArgumentException(
          "client-cert-file and client-key-file: give both or neither");
    }
    if ((tlsCertFile == null) != (tlsKeyFile == null)) {
      throw new IllegalArgumentException("tls-cert-file and tls-private-key-file: give both or neither");
    }
    bootstrapToken = bootstrapToken == null ? "" : bootstrapToken;
    nodeName = nodeName == null ? "" : nodeName;
    Objects.requireNonNull(workingMode, "workingMode");
    nodePoolName = nodePoolName == null ? "" : nodePoolName;
    namespace = namespace == null ? "" : namespace;
    Objects.requireNonNull(bootstrap, "bootstrap");
  }

  /** YurtHub's defaults for everything but the servers; the cache under {@code diskCachePath}. */
  public static EdgeHubConfig defaults(List<String> serverAddrs, Path diskCachePath) {
    return builder(serverAddrs, diskCachePath).build();
  }

  /** A builder with YurtHub's defaults for everything but the servers and the cache directory. */
  public static Builder builder(List<String> serverAddrs, Path diskCachePath) {
    return new Builder(serverAddrs, diskCachePath);
  }

  /** A builder holding these settings. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** A copy with other listener ports (0 = a free port). */
  public EdgeHubConfig withPorts(int proxyPort, int proxySecurePort, int servePort) {
    return toBuilder().ports(proxyPort, proxySecurePort, servePort).build();
  }

  /** A copy that also caches {@code components} ({@code *} for all). */
  public EdgeHubConfig withExtraCacheAgents(Set<String> components) {
    Set<String> all = new HashSet<>(cacheAgents);
    all.addAll(components);
    return toBuilder().cacheAgents(all).build();
  }

  /** A copy with other health-check settings and in-flight limit. */
  public EdgeHubConfig withLimits(Upstreams.Heartbeat heartbeat, int maxRequestsInFlight) {
    return toBuilder().heartbeat(heartbeat).maxRequestsInFlight(maxRequestsInFlight).build();
  }

  /** A copy with TLS files: client side to the API servers and server side of the secure port. */
  public EdgeHubConfig withTls(
      Path caFile, Path clientCertFile, Path clientKeyFile, Path tlsCertFile, Path tlsKeyFile) {
    return toBuilder().tls(caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile).build();
  }

  /** A copy for the hub on node {@code nodeName}. */
  public EdgeHubConfig withNodeName(String nodeName) {
    return toBuilder().nodeName(nodeName).build();
  }

  private static void port(String name, int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(name + ": " + port + " (expected: 0..65535)");
    }
  }

  /** Builds an {@link EdgeHubConfig}; every setter returns the builder. Not thread-safe. */
  public static final class Builder {
    private List<String> serverAddrs;
    private Upstreams.LbMode lbMode = Upstreams.LbMode.RR;
    private String bindAddress = "127.0.0.1";
    private String proxyBindAddress = "127.0.0.1";
    private int proxyPort = 10261;
    private int proxySecurePort = 10268;
    private int servePort = 10267;
    private Path diskCachePath;
    private Upstreams.Heartbeat heartbeat = Upstreams.Heartbeat.defaults();
    private int maxRequestsInFlight = 250;
    private Duration minRequestTimeout = Duration.ofSeconds(1800);
    private Set<String> cacheAgents = CachePolicy.DEFAULT_COMPONENTS;
    private Path caFile;
    private Path clientCertFile;
    private Path clientKeyFile;
    private Path tlsCertFile;
    private Path tlsKeyFile;
    private String bootstrapToken = "";
    private String nodeName = "";
    private WorkingMode workingMode = WorkingMode.EDGE;
    private String nodePoolName = "";
    private String namespace = "";
    private boolean profiling = true;
    private NodeBootstrap bootstrap = NodeBootstrap.NONE;

    private Builder(List<String> serverAddrs, Path diskCachePath) {
      this.serverAddrs = serverAddrs;
      this.diskCachePath = diskCachePath;
    }

    private Builder(EdgeHubConfig c) {
      serverAddrs = c.serverAddrs;
      lbMode = c.lbMode;
      bindAddress = c.bindAddress;
      proxyBindAddress = c.proxyBindAddress;
      proxyPort = c.proxyPort;
      proxySecurePort = c.proxySecurePort;
      servePort = c.servePort;
      diskCachePath = c.diskCachePath;
      heartbeat = c.heartbeat;
      maxRequestsInFlight = c.maxRequestsInFlight;
      minRequestTimeout = c.minRequestTimeout;
      cacheAgents = c.cacheAgents;
      tls(c.caFile, c.clientCertFile, c.clientKeyFile, c.tlsCertFile, c.tlsKeyFile);
      bootstrapToken = c.bootstrapToken;
      nodeName = c.nodeName;
      workingMode = c.workingMode;
      nodePoolName = c.nodePoolName;
      namespace = c.namespace;
      profiling = c.profiling;
      bootstrap = c.bootstrap;
    }

    public Builder serverAddrs(List<String> serverAddrs) {
      this.serverAddrs = serverAddrs;
      return this;
    }

    public Builder lbMode(Upstreams.LbMode lbMode) {
      this.lbMode = lbMode;
      return this;
    }

    /** {@code --bind-address} (hub server) and {@code --bind-proxy-address} (proxy ports). */
    public Builder bindAddresses(String bindAddress, String proxyBindAddress) {
      this.bindAddress = bindAddress;
      this.proxyBindAddress = proxyBindAddress;
      return this;
    }

    public Builder ports(int proxyPort, int proxySecurePort, int servePort) {
      this.proxyPort = proxyPort;
      this.proxySecurePort = proxySecurePort;
      this.servePort = servePort;
      return this;
    }

    public Builder diskCachePath(Path diskCachePath) {
      this.diskCachePath = diskCachePath;
      return this;
    }

    public Builder heartbeat(Upstreams.Heartbeat heartbeat) {
      this.heartbeat = heartbeat;
      return this;
    }

    public Builder maxRequestsInFlight(int maxRequestsInFlight) {
      this.maxRequestsInFlight = maxRequestsInFlight;
      return this;
    }

    public Builder minRequestTimeout(Duration minRequestTimeout) {
      this.minRequestTimeout = minRequestTimeout;
      return this;
    }

    public Builder cacheAgents(Set<String> cacheAgents) {
      this.cacheAgents = cacheAgents;
      return this;
    }

    /** TLS files: client side to the API servers and server side of the secure port. */
    public Builder tls(Path caFile, Path clientCertFile, Path clientKeyFile, Path tlsCertFile,
        Path tlsKeyFile) {
      this.caFile = caFile;
      this.clientCertFile = clientCertFile;
      this.clientKeyFile = clientKeyFile;
      this.tlsCertFile = tlsCertFile;
      this.tlsKeyFile = tlsKeyFile;
      return this;
    }

    public Builder bootstrapToken(String bootstrapToken) {
      this.bootstrapToken = bootstrapToken;
      return this;
    }

    public Builder nodeName(String nodeName) {
      this.nodeName = nodeName;
      return this;
    }

    public Builder workingMode(WorkingMode workingMode) {
      this.workingMode = workingMode;
      return this;
    }

    public Builder nodePoolName(String nodePoolName) {
      this.nodePoolName = nodePoolName;
      return this;
    }

    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    public Builder profiling(boolean profiling) {
      this.profiling = profiling;
      return this;
    }

    public Builder bootstrap(NodeBootstrap bootstrap) {
      this.bootstrap = bootstrap;
      return this;
    }

    public EdgeHubConfig build() {
      return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyBindAddress, proxyPort,
          proxySecurePort, servePort, diskCachePath, heartbeat, maxRequestsInFlight,
          minRequestTimeout, cacheAgents, caFile, clientCertFile, clientKeyFile, tlsCertFile,
          tlsKeyFile, bootstrapToken, nodeName, workingMode, nodePoolName, namespace, profiling,
          bootstrap);
    }
  }
}
