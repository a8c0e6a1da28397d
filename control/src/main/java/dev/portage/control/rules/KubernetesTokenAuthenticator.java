package dev.portage.control.rules;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A {@link TokenAuthenticator} that asks the Kubernetes API server ({@code TokenReview}) and accepts
 * service-account tokens only ({@code system:serviceaccount:<ns>:<sa>}). The blocking API call runs
 * on the given executor. Thread-safe.
 */
public final class KubernetesTokenAuthenticator implements TokenAuthenticator {

  private static final String SA_PREFIX = "system:serviceaccount:";

  private final KubernetesClient client;
  private final Executor executor;
  private final String trustDomain;

  /**
   * @param trustDomain trust domain of the principals it reports, e.g. {@code cluster.local}
   */
  public KubernetesTokenAuthenticator(KubernetesClient client, Executor executor, String trustDomain) {
    this.client = Objects.requireNonNull(client, "client");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.trustDomain = Objects.requireNonNull(trustDomain, "trustDomain");
  }

  @Override
  public CompletionStage<ClientIdentity> authenticate(String token) {
    return CompletableFuture.supplyAsync(() -> review(token), executor);
  }

  private ClientIdentity review(String token) {
    TokenReview request = new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build();
    TokenReview response;
    try {
      response = client.authentication().v1().tokenReviews().create(request);
    } catch (RuntimeException e) {
      throw new CompletionException(new IllegalStateException("TokenReview failed: " + e.getMessage(), e));
    }
    var status = response == null ? null : response.getStatus();
    if (status == null || !Boolean.TRUE.equals(status.getAuthenticated())) {
      String why = status == null || status.getError() == null ? "not authenticated" : status.getError();
      throw new CompletionException(new IllegalArgumentException("token rejected by TokenReview: " + why));
    }
    String user = status.getUser() == null ? "" : Objects.toString(status.getUser().getUsername(), "");
    if (!user.startsWith(SA_PREFIX)) {
      throw new CompletionException(
          new IllegalArgumentException("token user " + user + " is not a service account"));
    }
    String[] nsSa = user.substring(SA_PREFIX.length()).split(":", -1);
    if (nsSa.length != 2 || nsSa[0].isEmpty() || nsSa[1].isEmpty()) {
      throw new CompletionException(new IllegalArgumentException("malformed service account user " + user));
    }
    return ClientIdentity.serviceAccount(trustDomain, nsSa[0], nsSa[1]);
  }
}
