package dev.portage.tunnel.server;

import java.nio.file.Path;
import java.util.Objects;

/**
 * PEM files for one TLS listener. With a {@code clientCa} the listener requires and verifies client
 * certificates (mTLS). Immutable.
 *
 * @param cert certificate chain
 * @param key private key (PKCS#8 or PKCS#1)
 * @param clientCa CA bundle for client certificates, or {@code null} for server-only TLS
 */
public record TlsFiles(Path cert, Path key, Path clientCa) {
  public TlsFiles {
    Objects.requireNonNull(cert, "cert");
    Objects.requireNonNull(key, "key");
  }
}
