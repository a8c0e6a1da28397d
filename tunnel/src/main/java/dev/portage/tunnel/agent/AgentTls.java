package dev.portage.tunnel.agent;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * Client TLS of the agent's server connections: trust {@code --ca-cert}, TLS 1.2 or newer, an mTLS
 * client certificate from {@code --agent-cert}/{@code --agent-key}, and ALPN. gRPC needs {@code h2}
 * negotiated, so {@code --alpn-proto} values are offered first and {@code h2} is always offered last
 * (grpc-go's TLS credentials do the same).
 */
final class AgentTls {
  private AgentTls() {}

  /** The TLS context for {@code cfg}, or null when the agent speaks plaintext (no CA configured). */
  static SslContext clientContext(TunnelAgentConfig cfg) throws SSLException {
    if (!cfg.tls()) {
      return null;
    }
    // JDK provider: with the pinned netty-tcnative 2.0.74, Netty 4.2.18's OpenSSL engine fails every
    // handshake (NoSuchMethodError SSL.getGroupName). Switch back once tcnative matches Netty.
    SslContextBuilder b =
        GrpcSslContexts.configure(SslContextBuilder.forClient(), SslProvider.JDK)
            .trustManager(cfg.caCert().toFile())
            .protocols("TLSv1.3", "TLSv1.2");
    if (cfg.agentCert() != null) {
      b.keyManager(cfg.agentCert().toFile(), cfg.agentKey().toFile());
    }
    if (!cfg.alpnProtos().isEmpty()) {
      List<String> protos = new ArrayList<>(cfg.alpnProtos());
      protos.remove("h2");
      protos.add("h2");
      b.applicationProtocolConfig(
          new ApplicationProtocolConfig(
              ApplicationProtocolConfig.Protocol.ALPN,
              ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
              ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
              protos));
    }
    return b.build();
  }
}
