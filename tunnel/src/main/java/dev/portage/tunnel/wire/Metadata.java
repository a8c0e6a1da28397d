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

  /**
   * Portage only, request and response header: {@code 1} offers per-connection flow control (credit
   * windows carried by {@code PORTAGE_WINDOW_UPDATE} packets). Used on a stream only when the agent
   * sent it and the server answered it; upstream peers ignore unknown metadata and never see either.
   */
  public static final Key<String> FLOW_CONTROL = ascii("portage-flow-control");

  /**
   * Portage only, sent with {@link #FLOW_CONTROL}: how many bytes of one connection the sender of the
   * header is willing to hold unacknowledged (decimal); its peer starts each connection with that much
   * credit.
   */
  public static final Key<String> FLOW_CONTROL_WINDOW = ascii("portage-flow-control-window");

  /** The only value of {@link #FLOW_CONTROL} defined so far. */
  public static final String FLOW_CONTROL_V1 = "1";

  private static Key<String> ascii(String name) {
    return Key.of(name, io.grpc.Metadata.ASCII_STRING_MARSHALLER);
  }
}
