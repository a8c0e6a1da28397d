package dev.portage.tunnel.wire;

import io.grpc.Metadata.Key;

/**
 * gRPC metadata keys of the Konnectivity protocol, lowercase as on the wire (shared/specs/konnectivity.md).
 * Request keys are sent by the agent on {@code AgentService.Connect}; response keys by the server in
 * its response headers, before any packet.
 */
public final class Metadata {
  private Metadata() {}

  /** Agent request header: the agent's ID, exactly one value. */
  public static final Key<String> AGENT_ID = ascii("agentid");

  /** Agent request header: URL-query encoded identifiers ({@code host=a&ipv4=1.2.3.4&default-route=true}). */
  public static final Key<String> AGENT_IDENTIFIERS = ascii("agentidentifiers");

  /** Agent request header: {@code Bearer <token>} when token auth is on. */
  public static final Key<String> AUTHORIZATION = ascii("authorization");

  /** Server response header: the server's ID. */
  public static final Key<String> SERVER_ID = ascii("serverid");

  /** Server response header: how many server replicas the agent should connect to (decimal). */
  public static final Key<String> SERVER_COUNT = ascii("servercount");

  private static Key<String> ascii(String name) {
    return Key.of(name, io.grpc.Metadata.ASCII_STRING_MARSHALLER);
  }
}
