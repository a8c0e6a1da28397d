package dev.portage.core.net;

import java.util.List;
import java.util.Set;

/**
 * The cipher suite names a Go component's {@code --cipher-suites} flag accepts: those Go's {@code
 * crypto/tls} lists in {@code CipherSuites()} (implemented and without known security issues), by the
 * names Go gives them, which are the IANA names. Suites Go lists as insecure ({@code
 * InsecureCipherSuites()}: RC4, 3DES, CBC with SHA-256) and names Go does not know are refused, as
 * upstream Konnectivity refuses them. Stateless.
 */
public final class GoCipherSuites {

  /** Go's {@code tls.CipherSuites()} names: TLS 1.3 first, then TLS 1.0–1.2. */
  static final Set<String> SECURE = Set.of(
      "TLS_AES_128_GCM_SHA256",
      "TLS_AES_256_GCM_SHA384",
      "TLS_CHACHA20_POLY1305_SHA256",
      "TLS_RSA_WITH_AES_128_CBC_SHA",
      "TLS_RSA_WITH_AES_256_CBC_SHA",
      "TLS_RSA_WITH_AES_128_GCM_SHA256",
      "TLS_RSA_WITH_AES_256_GCM_SHA384",
      "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
      "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
      "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
      "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
      "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
      "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
      "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
      "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
      "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256");

  private GoCipherSuites() {}

  /**
   * Checks {@code names} as upstream checks {@code --cipher-suites}.
   *
   * @throws IllegalArgumentException naming the first suite that Go does not know or considers
   *     insecure, in upstream's words
   */
  public static void requireSecure(List<String> names) {
    for (String name : names) {
      if (!SECURE.contains(name)) {
        throw new IllegalArgumentException(
            "cipher suite " + name + " not supported, doesn't exist or considered as insecure");
      }
    }
  }
}
