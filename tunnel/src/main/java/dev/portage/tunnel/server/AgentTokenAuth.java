package dev.portage.tunnel.server;

import java.util.Objects;

/**
 * Token authentication of agents: the bearer token must pass a Kubernetes TokenReview for {@code
 * audience} as {@code system:serviceaccount:<namespace>:<serviceAccount>}. Immutable.
 */
public record AgentTokenAuth(String namespace, String serviceAccount, String audience) {
  public AgentTokenAuth {
    requireText(namespace, "agentNamespace");
    requireText(serviceAccount, "agentServiceAccount");
    requireText(audience, "authenticationAudience");
  }

  /** The username a valid agent token reviews as. */
  public String expectedUsername() {
    return "system:serviceaccount:" + namespace + ":" + serviceAccount;
  }

  private static void requireText(String v, String name) {
    Objects.requireNonNull(v, name);
    if (v.isBlank()) {
      throw new IllegalArgumentException(name + ": \"\" (expected: non-empty with token auth)");
    }
  }
}
