package dev.portage.hub;

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
 * parentheses). Immutable; validated on construction.
 *
 * @param serverAddrs API server URLs ({@code --server-addr}); all http or all https
 * @param lbMode {@code --lb-mode}
 * @param bindAddress address of the proxy listeners and the hub server ({@code --bind-address})
 * @param proxyPort plain HTTP proxy port ({@code --proxy-port}, 10261); 0 picks a free port
 * @param proxySecurePort TLS proxy port ({@code --proxy-secure-port}, 10268); only opened when
 *     {@code tlsCertFile} and {@code tlsKeyFile} are set
 * @param servePort hub server port ({@code --serve-port}, 10267): /v1/healthz, /v1/readyz,
 *     /metrics, POST /v1/token
 * @param diskCachePath cache root ({@code --disk-cache-path})
 * @param heartbeat {@code --heartbeat-interval-seconds}, {@code --heartbeat-timeout-seconds},
 *     {@code --heartbeat-healthy-threshold}, {@code --heartbeat-failed-retry}
 * @param maxRequestsInFlight {@code --max-requests-in-flight}; watches are not counted
 * @param minRequestTimeout {@code --min-request-timeout}; offline watches end after this × U[1,2)
 * @param cacheAgents components whose responses are cached, {@code *} for all ({@code
 *     --cache-agents} plus YurtHub's defaults)
 * @param caFile CA of the API servers' certificates; null for the JDK trust store
 * @param clientCertFile client certificate to the API servers; null for none
 * @param clientKeyFile key of {@code clientCertFile}
 * @param tlsCertFile server certificate of the secure proxy port; null disables that port
 * @param tlsKeyFile key of {@code tlsCertFile}
 * @param bootstrapToken token sent to the API servers on requests without {@code Authorization};
 *     "" for none (updated at runtime by {@code POST /v1/token})
 * @param nodeName the node the hub runs on ({@code --node-name}): the kubelet's cache holds only
 *     this Node and its Lease, and its Lease renewals and node status updates are answered
 *     locally while the cloud is unreachable; "" for none
 */
public record EdgeHubConfig(
    List<String> serverAddrs,
    Upstreams.LbMode lbMode,
    String bindAddress,
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
    String nodeName) {

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
  }

  /** YurtHub's defaults for everything but the servers; the cache under {@code diskCachePath}. */
  public static EdgeHubConfig defaults(List<String> serverAddrs, Path diskCachePath) {
    return new EdgeHubConfig(serverAddrs, Upstreams.LbMode.RR, "127.0.0.1", 10261, 10268, 10267,
        diskCachePath, Upstreams.Heartbeat.defaults(), 250, Duration.ofSeconds(1800),
        CachePolicy.DEFAULT_COMPONENTS, null, null, null, null, null, "", "");
  }

  /** A copy with other listener ports (0 = a free port). */
  public EdgeHubConfig withPorts(int proxyPort, int proxySecurePort, int servePort) {
    return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyPort, proxySecurePort,
        servePort, diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, cacheAgents,
        caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile, bootstrapToken, nodeName);
  }

  /** A copy that also caches {@code components} ({@code *} for all). */
  public EdgeHubConfig withExtraCacheAgents(Set<String> components) {
    Set<String> all = new HashSet<>(cacheAgents);
    all.addAll(components);
    return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyPort, proxySecurePort,
        servePort, diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, all, caFile,
        clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile, bootstrapToken, nodeName);
  }

  /** A copy with other health-check settings and in-flight limit. */
  public EdgeHubConfig withLimits(Upstreams.Heartbeat heartbeat, int maxRequestsInFlight) {
    return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyPort, proxySecurePort,
        servePort, diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, cacheAgents,
        caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile, bootstrapToken, nodeName);
  }

  /** A copy with TLS files: client side to the API servers and server side of the secure port. */
  public EdgeHubConfig withTls(
      Path caFile, Path clientCertFile, Path clientKeyFile, Path tlsCertFile, Path tlsKeyFile) {
    return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyPort, proxySecurePort,
        servePort, diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, cacheAgents,
        caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile, bootstrapToken, nodeName);
  }

  /** A copy for the hub on node {@code nodeName}. */
  public EdgeHubConfig withNodeName(String nodeName) {
    return new EdgeHubConfig(serverAddrs, lbMode, bindAddress, proxyPort, proxySecurePort,
        servePort, diskCachePath, heartbeat, maxRequestsInFlight, minRequestTimeout, cacheAgents,
        caFile, clientCertFile, clientKeyFile, tlsCertFile, tlsKeyFile, bootstrapToken, nodeName);
  }

  private static void port(String name, int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(name + ": " + port + " (expected: 0..65535)");
    }
  }
}
