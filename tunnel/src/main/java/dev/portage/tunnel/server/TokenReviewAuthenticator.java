package dev.portage.tunnel.server;

import dev.portage.core.time.TimeSource;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits an agent whose {@code authorization: Bearer <token>} passes a Kubernetes TokenReview ({@code
 * authentication.k8s.io/v1}) for the configured audience as the configured service account, as
 * upstream's {@code --agent-namespace}/{@code --agent-service-account} do. Never blocks its caller.
 *
 * <p>A flood of connects (a fleet of agents restarting, or an API server that stalls) costs bounded
 * threads, connections and memory:
 * <table>
 *   <caption>Limits</caption>
 *   <tr><td>{@value #MAX_CONCURRENT_REVIEWS} reviews at once</td><td>on threads of this authenticator; each
 *       holds one API connection while it waits</td></tr>
 *   <tr><td>{@value #MAX_QUEUED_REVIEWS} more tokens queued for a review</td><td>beyond: UNAVAILABLE at once
 *       (the agent retries with its backoff)</td></tr>
 *   <tr><td>one review per token</td><td>agents presenting a token that is being reviewed wait for that
 *       review</td></tr>
 *   <tr><td>{@value #MAX_WAITING} agents waiting</td><td>beyond: UNAVAILABLE at once</td></tr>
 *   <tr><td>{@link #WAIT} (10 s) of waiting</td><td>then UNAVAILABLE (the review itself runs on, bounded by
 *       the Kubernetes client's request timeout)</td></tr>
 *   <tr><td>answers kept {@link #CACHE_TTL} (10 s)</td><td>authenticated and refused alike, at most
 *       {@value #CACHE_SIZE} tokens (by SHA-256 digest); API errors are not kept</td></tr>
 * </table>
 * Thread-safe.
 */
final class TokenReviewAuthenticator implements AgentAuthenticator, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TokenReviewAuthenticator.class);
  private static final String BEARER = "Bearer ";

  static final int MAX_CONCURRENT_REVIEWS = 4;
  static final int MAX_QUEUED_REVIEWS = 64;
  static final int MAX_WAITING = 1024;
  static final int CACHE_SIZE = 1024;
  static final Duration CACHE_TTL = Duration.ofSeconds(10);
  static final Duration WAIT = Duration.ofSeconds(10);

  private final KubernetesClient client;
  private final AgentTokenAuth auth;
  private final TimeSource time;
  private final ServerMetrics metrics;
  private final TokenReviewCache cache;
  private final ThreadPoolExecutor reviewers;
  private final Map<String, CompletableFuture<TokenReviewCache.Answer>> inFlight = new ConcurrentHashMap<>();
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicBoolean overloaded = new AtomicBoolean();

  TokenReviewAuthenticator(KubernetesClient client, AgentTokenAuth auth, TimeSource time, ServerMetrics metrics) {
    this.client = client;
    this.auth = auth;
    this.time = time;
    this.metrics = metrics;
    this.cache = new TokenReviewCache(time.ticker(), CACHE_TTL, CACHE_SIZE);
    this.reviewers = new ThreadPoolExecutor(MAX_CONCURRENT_REVIEWS, MAX_CONCURRENT_REVIEWS, 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(MAX_QUEUED_REVIEWS), TunnelServer.daemon("portage-token-review"));
    reviewers.allowCoreThreadTimeOut(true);
  }

  @Override
  public CompletableFuture<Void> authenticate(String agentId, Metadata headers) {
    String token;
    try {
      token = bearerToken(headers);
    } catch (StatusException e) {
      return CompletableFuture.failedFuture(e);
    }
    String key = digest(token);
    TokenReviewCache.Answer cached = cache.get(key);
    if (cached != null) {
      metrics.tokenReview("cached");
      return decide(cached);
    }
    if (waiting.incrementAndGet() > MAX_WAITING) {
      waiting.decrementAndGet();
      return overloaded("too many agents waiting for token reviews (" + MAX_WAITING + ")");
    }
    CompletableFuture<TokenReviewCache.Answer> review = review(key, token);
    CompletableFuture<Void> result = new CompletableFuture<>();
    ScheduledFuture<?> deadline = time.scheduler().schedule(() -> {
      if (result.completeExceptionally(unavailable("token review did not answer within " + WAIT.toSeconds() + " s"))) {
        metrics.tokenReview("timeout");
      }
    }, WAIT.toNanos(), TimeUnit.NANOSECONDS);
    review.whenComplete((answer, failure) -> {
      deadline.cancel(false);
      if (failure != null) {
        result.completeExceptionally(failure);
      } else {
        decide(answer).whenComplete((ok, refused) -> {
          if (refused != null) {
            result.completeExceptionally(refused);
          } else {
            result.complete(null);
          }
        });
      }
    });
    result.whenComplete((ok, failure) -> waiting.decrementAndGet());
    return result;
  }

  /** The review of {@code token}: the one in flight for it, or a new one queued for a reviewer. */
  private CompletableFuture<TokenReviewCache.Answer> review(String key, String token) {
    CompletableFuture<TokenReviewCache.Answer> mine = new CompletableFuture<>();
    CompletableFuture<TokenReviewCache.Answer> running = inFlight.putIfAbsent(key, mine);
    if (running != null) {
      return running;
    }
    try {
      reviewers.execute(() -> {
        try {
          TokenReviewCache.Answer answer = callApi(token);
          cache.put(key, answer);
          mine.complete(answer);
        } catch (StatusException e) {
          mine.completeExceptionally(e);
        } finally {
          inFlight.remove(key, mine);
        }
      });
      overloaded.set(false);
    } catch (RejectedExecutionException e) {
      inFlight.remove(key, mine);
      mine.completeExceptionally(overloadedStatus("too many token reviews queued (" + MAX_QUEUED_REVIEWS
          + " behind " + MAX_CONCURRENT_REVIEWS + " running)"));
    }
    return mine;
  }

  /** The blocking TokenReview; runs on a reviewer thread. */
  private TokenReviewCache.Answer callApi(String token) throws StatusException {
    TokenReview request = new TokenReviewBuilder()
        .withNewSpec()
        .withToken(token)
        .withAudiences(auth.audience())
        .endSpec()
        .build();
    TokenReview review;
    try {
      review = client.authentication().v1().tokenReviews().create(request);
    } catch (KubernetesClientException e) {
      metrics.tokenReview("error");
      log.warn("token review failed: {}", e.getMessage());
      throw unavailable("token review failed: " + e.getMessage());
    }
    metrics.tokenReview("reviewed");
    if (review.getStatus() == null || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())) {
      String why = review.getStatus() == null ? "" : review.getStatus().getError();
      return new TokenReviewCache.Answer(Status.UNAUTHENTICATED.withDescription(
          "agent token was not authenticated for audience " + auth.audience()
              + (why == null || why.isEmpty() ? "" : ": " + why)));
    }
    String username = review.getStatus().getUser() == null ? null : review.getStatus().getUser().getUsername();
    if (!auth.expectedUsername().equals(username)) {
      return new TokenReviewCache.Answer(Status.PERMISSION_DENIED.withDescription(
          "agent token belongs to " + username + " (expected: " + auth.expectedUsername() + ")"));
    }
    return TokenReviewCache.Answer.ADMITTED;
  }

  private static CompletableFuture<Void> decide(TokenReviewCache.Answer answer) {
    return answer.refusal() == null
        ? CompletableFuture.completedFuture(null)
        : CompletableFuture.failedFuture(answer.refusal().asException());
  }

  private CompletableFuture<Void> overloaded(String why) {
    return CompletableFuture.failedFuture(overloadedStatus(why));
  }

  /** UNAVAILABLE for a limit reached; one WARN per episode (the first after a review could be queued again). */
  private StatusException overloadedStatus(String why) {
    metrics.tokenReview("overload");
    if (overloaded.compareAndSet(false, true)) {
      log.warn("agent token reviews overloaded: {}; refusing agents with UNAVAILABLE until reviews can be queued", why);
    }
    return unavailable(why);
  }

  private static String bearerToken(Metadata headers) throws StatusException {
    List<String> values = new ArrayList<>();
    Iterable<String> all = headers.getAll(dev.portage.tunnel.wire.Metadata.AUTHORIZATION);
    if (all != null) {
      all.forEach(values::add);
    }
    if (values.size() != 1) {
      throw unauthenticated("expected exactly one authorization header, got " + values.size());
    }
    String value = values.get(0);
    if (!value.startsWith(BEARER) || value.substring(BEARER.length()).isBlank()) {
      throw unauthenticated("authorization header is not a bearer token (expected: \"Bearer <token>\")");
    }
    return value.substring(BEARER.length()).trim();
  }

  private static String digest(String token) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  private static StatusException unauthenticated(String description) {
    return Status.UNAUTHENTICATED.withDescription(description).asException();
  }

  private static StatusException unavailable(String description) {
    return Status.UNAVAILABLE.withDescription(description).asException();
  }

  /** Agents waiting for a review now; for tests. */
  int waiting() {
    return waiting.get();
  }

  /** Stops the reviewer threads (a review in progress ends with the Kubernetes client's request). */
  @Override
  public void close() {
    reviewers.shutdownNow();
  }
}
