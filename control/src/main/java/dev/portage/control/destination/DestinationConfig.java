package dev.portage.control.destination;

import java.util.Locale;
import java.util.Objects;

/**
 * Settings of the {@link DestinationServer}.
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>field</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>clusterDomain</td><td>cluster.local</td><td>suffix of service FQDNs ({@code svc.ns.svc.<domain>})</td></tr>
 *   <tr><td>streamQueueLimit</td><td>100</td><td>updates a Get stream may hold unsent before it is aborted</td></tr>
 *   <tr><td>endpointWeight</td><td>10000</td><td>weight of every endpoint (Linkerd's default)</td></tr>
 * </table>
 */
public record DestinationConfig(String clusterDomain, int streamQueueLimit, int endpointWeight) {

  public static final String DEFAULT_CLUSTER_DOMAIN = "cluster.local";
  public static final int DEFAULT_STREAM_QUEUE_LIMIT = 100;
  public static final int DEFAULT_ENDPOINT_WEIGHT = 10_000;

  public DestinationConfig {
    Objects.requireNonNull(clusterDomain, "clusterDomain");
    if (clusterDomain.isEmpty() || clusterDomain.startsWith(".") || clusterDomain.endsWith(".")) {
      throw new IllegalArgumentException(
          "clusterDomain: \"" + clusterDomain + "\" (expected: a domain like cluster.local)");
    }
    clusterDomain = clusterDomain.toLowerCase(Locale.ROOT);
    if (streamQueueLimit < 1) {
      throw new IllegalArgumentException("streamQueueLimit: " + streamQueueLimit + " (expected: > 0)");
    }
    if (endpointWeight < 1) {
      throw new IllegalArgumentException("endpointWeight: " + endpointWeight + " (expected: > 0)");
    }
  }

  /** The defaults of the table above. */
  public static DestinationConfig defaults() {
    return new DestinationConfig(DEFAULT_CLUSTER_DOMAIN, DEFAULT_STREAM_QUEUE_LIMIT, DEFAULT_ENDPOINT_WEIGHT);
  }

  /** The same settings with another cluster domain. */
  public DestinationConfig withClusterDomain(String domain) {
    return new DestinationConfig(domain, streamQueueLimit, endpointWeight);
  }

  /** The same settings with another per-stream queue bound. */
  public DestinationConfig withStreamQueueLimit(int limit) {
    return new DestinationConfig(clusterDomain, limit, endpointWeight);
  }
}
