package dev.portage.tunnel.server;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits an agent whose {@code authorization: Bearer <token>} passes a Kubernetes TokenReview ({@code
 * authentication.k8s.io/v1}) for the configured audience as the configured service account, as
 * upstream's {@code --agent-namespace}/{@code --agent-service-account} do. Thread-safe; blocks on
 * the API call (it runs on the gRPC executor, before the server's response headers).
 */
final class TokenReviewAuthenticator implements AgentAuthenticator {
  private static final Logger log = LoggerFactory.getLogger(TokenReviewAuthenticator.class);
  private static final String BEARER = "Bearer ";

  private final KubernetesClient client;
  private final AgentTokenAuth auth;

  TokenReviewAuthenticator(KubernetesClient client, AgentTokenAuth auth) {
    this.client = client;
    this.auth = auth;
  }

  @Override
  public void authenticate(String agentId, Metadata headers) throws StatusException {
    List<String> values = new ArrayList<>();
    Iterable<String> all = headers.getAll(dev.portage.tunnel.wire.Metadata.AUTHORIZATION);
    if (all != null) {
      all.forEach(values::add);
    }
    if (values.size() != 1) {
      throw unauthenticated("expected exactly one authorization header, got " + values.size());
    }
    String value = values.get(0);
    if (!value.startsWith(BEARER) || value.length() == BEARER.length()) {
      throw unauthenticated("authorization header is not a bearer token (expected: \"Bearer <token>\")");
    }
    TokenReview request = new TokenReviewBuilder()
        .withNewSpec()
        .withToken(value.substring(BEARER.length()).trim())
        .withAudiences(auth.audience())
        .endSpec()
        .build();
    TokenReview review;
    try {
      review = client.authentication().v1().tokenReviews().create(request);
    } catch (KubernetesClientException e) {
      log.warn("token review for agent {} failed", agentId, e);
      throw Status.UNAVAILABLE.withDescription("token review failed: " + e.getMessage()).asException();
    }
    if (review.getStatus() == null || !Boolean.TRUE.equals(review.getStatus().getAuthenticated())) {
      String why = review.getStatus() == null ? "" : review.getStatus().getError();
      throw unauthenticated("agent token was not authenticated for audience " + auth.audience()
          + (why == null || why.isEmpty() ? "" : ": " + why));
    }
    String username = review.getStatus().getUser() == null ? null : review.getStatus().getUser().getUsername();
    if (!auth.expectedUsername().equals(username)) {
      throw Status.PERMISSION_DENIED
          .withDescription("agent token belongs to " + username + " (expected: " + auth.expectedUsername() + ")")
          .asException();
    }
  }

  private static StatusException unauthenticated(String description) {
    return Status.UNAUTHENTICATED.withDescription(description).asException();
  }
}
