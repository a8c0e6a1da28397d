package dev.portage.control.client;

import dev.portage.core.net.TlsContexts;
import dev.portage.core.net.TlsOptions;
import io.grpc.ManagedChannel;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How a proxy reaches the control plane's gRPC port over TLS: the CA that signs the control plane's
 * certificate, an optional client certificate and key (for a control plane that requires client
 * certificates, {@code portage control-plane --client-ca}), and an optional server name to verify
 * instead of the host of the address (Linkerd's {@code LINKERD2_PROXY_DESTINATION_SVC_NAME} plays
 * this part). Immutable.
 *
 * @param ca PEM CA bundle the control plane's certificate must chain to; null for the JDK's trust store
 * @param cert PEM client certificate chain; null together with {@code key} for none
 * @param key PEM private key of {@code cert}
 * @param serverName name to verify in the control plane's certificate (and to send as SNI and
 *     {@code :authority}); null for the host of the address
 */
public record ControlPlaneTls(Path ca, Path cert, Path key, String serverName) {

  public ControlPlaneTls {
    if ((cert == null) != (key == null)) {
      throw new IllegalArgumentException(
          "client certificate: " + cert + ", key: " + key + " (expected: both or neither)");
    }
    if (serverName != null && serverName.isBlank()) {
      serverName = null;
    }
  }

  /**
   * A gRPC channel to {@code target} ({@code host:port}): TLS as {@code tls} says, or plaintext when
   * {@code tls} is null.
   *
   * @throws IOException naming the file when a CA, certificate or key cannot be read or do not match
   */
  public static ManagedChannel channel(String target, ControlPlaneTls tls) throws IOException {
    Objects.requireNonNull(target, "target");
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(target);
    if (tls == null) {
      return b.usePlaintext().build();
    }
    b.sslContext(GrpcSslContexts.configure(
            TlsContexts.clientBuilder(tls.ca(), tls.cert(), tls.key(), TlsOptions.defaults()),
            TlsContexts.provider())
        .build());
    if (tls.serverName() != null) {
      b.overrideAuthority(tls.serverName());
    }
    return b.build();
  }
}
