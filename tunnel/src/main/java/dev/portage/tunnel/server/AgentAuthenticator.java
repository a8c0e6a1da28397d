package dev.portage.tunnel.server;

import io.grpc.Metadata;
import java.util.concurrent.CompletableFuture;

/**
 * Decides whether an agent may connect, from its request headers, before the server answers with its
 * own headers. Implementations are thread-safe and never block the caller (an event loop): a decision
 * that needs I/O completes later, on another thread.
 */
@FunctionalInterface
interface AgentAuthenticator {
  /** Lets every agent in (no token auth; TLS client certificates, if any, were checked by the transport). */
  AgentAuthenticator NONE = (agentId, headers) -> CompletableFuture.completedFuture(null);

  /**
   * Completes normally to admit the agent, or exceptionally with a {@link io.grpc.StatusException}
   * (UNAUTHENTICATED, PERMISSION_DENIED, or UNAVAILABLE when the decision cannot be made now).
   */
  CompletableFuture<Void> authenticate(String agentId, Metadata headers);
}
