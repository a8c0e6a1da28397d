package dev.portage.tunnel.kube;

import dev.portage.core.ratelimit.TokenBucket;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.time.Duration;

/**
 * client-go's request rate limiter for a fabric8 client: each request waits for a token of the bucket
 * before it is sent (on the thread that sends it, as client-go's does). A request that cannot get one
 * within a minute is sent anyway rather than failed: the limit protects the API server from a busy
 * client, not the client from itself. Thread-safe.
 */
final class RequestRateLimit implements Interceptor {
  static final String NAME = "PORTAGE-RATE-LIMIT";
  private static final Duration MAX_WAIT = Duration.ofMinutes(1);

  private final TokenBucket bucket;

  RequestRateLimit(TokenBucket bucket) {
    this.bucket = bucket;
  }

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    try {
      bucket.acquire(1, MAX_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
