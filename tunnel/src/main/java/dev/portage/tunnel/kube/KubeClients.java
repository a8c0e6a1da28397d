package dev.portage.tunnel.kube;

import dev.portage.core.ratelimit.TokenBucket;
import dev.portage.core.time.Ticker;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes API clients for the tunnel (TokenReviews, Leases), configured as upstream's client-go
 * configuration is from {@code --kubeconfig}, {@code --kubeconfig-qps}, {@code --kubeconfig-burst} and
 * {@code --kube-api-content-type}:
 * <ul>
 *   <li>the kubeconfig file, or in-cluster configuration (then {@code ~/.kube/config}) without one;
 *   <li>a token bucket in front of every request: {@code qps} per second with bursts of {@code burst},
 *       client-go's defaults (5 and 10) when either is 0, as client-go applies them;
 *   <li>the content type: fabric8's client speaks JSON ({@code application/json}). Upstream's default,
 *       protobuf, is answered with the same objects in JSON by every API server, so it is taken
 *       quietly (an unchanged manifest must not warn on every start); any other value logs one WARN
 *       and JSON is used.
 * </ul>
 * Stateless.
 */
public final class KubeClients {
  private static final Logger log = LoggerFactory.getLogger(KubeClients.class);

  /** client-go's defaults when the configured QPS or burst is 0. */
  static final float DEFAULT_QPS = 5;
  static final int DEFAULT_BURST = 10;
  public static final String PROTOBUF = "application/vnd.kubernetes.protobuf";
  public static final String JSON = "application/json";

  private KubeClients() {}

  /**
   * A client for {@code kubeconfig} (null: in-cluster, else {@code ~/.kube/config}).
   *
   * @param qps requests per second, {@code >= 0}; 0 means 5
   * @param burst requests at once above the rate, {@code >= 0}; 0 means 10
   * @param contentType what upstream would send and ask for; see the class comment
   * @throws IOException when the kubeconfig file cannot be read
   */
  public static KubernetesClient create(Path kubeconfig, float qps, int burst, String contentType) throws IOException {
    if (qps < 0 || Float.isNaN(qps)) {
      throw new IllegalArgumentException("kubeconfig-qps: " + qps + " (expected: >= 0)");
    }
    if (burst < 0) {
      throw new IllegalArgumentException("kubeconfig-burst: " + burst + " (expected: >= 0)");
    }
    if (contentType != null && !speaksAsJson(contentType)) {
      log.warn("--kube-api-content-type={}: the Kubernetes client speaks {} only; using it", contentType, JSON);
    }
    Config config = kubeconfig == null
        ? Config.autoConfigure(null)
        : Config.fromKubeconfig(Files.readString(kubeconfig));
    TokenBucket bucket = new TokenBucket(qps == 0 ? DEFAULT_QPS : qps, burst == 0 ? DEFAULT_BURST : burst,
        Ticker.system());
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor(RequestRateLimit.NAME, new RequestRateLimit(bucket)))
        .build();
  }

  /** True for JSON and for upstream's default protobuf, which the client replaces by JSON without a word. */
  static boolean speaksAsJson(String contentType) {
    String type = contentType.toLowerCase(Locale.ROOT).strip();
    return type.startsWith(JSON) || type.startsWith(PROTOBUF);
  }
}
