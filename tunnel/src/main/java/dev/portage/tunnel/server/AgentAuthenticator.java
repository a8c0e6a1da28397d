package dev.portage.tunnel.server;

import io.grpc.Metadata;
import io.grpc.StatusException;

/**
 * Decides whether an agent may connect, from its request headers, before the server answers with its
 * own headers. Implementations are thread-safe and may block (they run on the gRPC executor).
 */
@FunctionalInterface
interface AgentAuthenticator {
  /** Lets every agent in (no token auth; TLS client certificates, if any, were checked by the transport). */
  AgentAuthenticator NONE = (agentId, headers) -> {};

  /** Returns normally to admit the agent; throws with UNAUTHENTICATED or PERMISSION_DENIED otherwise. */
  void authenticate(String agentId, Metadata headers) throws StatusException;
}
