package dev.portage.tunnel.agent;

import dev.portage.core.net.TlsContexts;
import dev.portage.core.net.TlsOptions;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Client TLS of the agent's server connections: trust {@code --ca-cert}, TLS 1.2 or newer, an mTLS
 * client certificate from {@code --agent-cert}/{@code --agent-key}, and ALPN. gRPC needs {@code h2}
 * negotiated, so {@code --alpn-proto} values are offered first and {@code h2} is always offered last
 * (grpc-go's TLS credentials do the same). {@code --tls-key-exchange-groups} chooses the
 * key-exchange groups offered (default: the provider's, X25519MLKEM768 first with BoringSSL). The
 * engine is {@link TlsContexts#provider()}'s: BoringSSL when netty-tcnative loads, the JDK otherwise.
 */
final class AgentTls {
  private AgentTls() {}

  /** The TLS context for {@code cfg}, or null when the agent speaks plaintext (no CA configured). */
  static SslContext clientContext(TunnelAgentConfig cfg) throws IOException {
    if (!cfg.tls()) {
      return null;
    }
    TlsOptions options = TlsOptions.defaults().withKeyExchangeGroups(cfg.keyExchangeGroups());
    SslContextBuilder b = GrpcSslContexts.configure(
        TlsContexts.clientBuilder(cfg.caCert(), cfg.agentCert(), cfg.agentKey(), options),
        TlsContexts.provider());
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
    return TlsContexts.withKeyExchangeGroups(b.build(), options);
  }
}
