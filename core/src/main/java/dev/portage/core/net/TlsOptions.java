package dev.portage.core.net;

import java.util.List;
import java.util.Objects;

/**
 * Protocol choices for a {@link TlsContexts} context: the lowest TLS version, TLS 1.2 cipher suites,
 * ALPN protocols and key-exchange groups. Immutable.
 *
 * @param minVersion {@code TLSv1.2} or {@code TLSv1.3}; the upstream flag spellings {@code
 *     VersionTLS12} and {@code VersionTLS13} are accepted and normalised
 * @param cipherSuites IANA (or OpenSSL) names of the TLS 1.2 suites to allow, in preference order;
 *     empty means the provider's secure defaults. Like Go's {@code crypto/tls}, the list does not
 *     restrict TLS 1.3, whose standard suites stay enabled unless the list names some itself.
 * @param alpnProtocols ALPN protocols to offer (client) or accept (server), in preference order;
 *     empty disables ALPN
 * @param keyExchangeGroups key-exchange groups to offer (client) or accept (server), in preference
 *     order, by IANA name ({@link KeyExchangeGroup#normalise} turns Go and OpenSSL names into these);
 *     empty means the provider's default, which with Netty 4.2 and BoringSSL puts the post-quantum
 *     hybrid X25519MLKEM768 first
 */
public record TlsOptions(
    String minVersion,
    List<String> cipherSuites,
    List<String> alpnProtocols,
    List<String> keyExchangeGroups) {

  static final String TLS12 = "TLSv1.2";
  static final String TLS13 = "TLSv1.3";

  private static final TlsOptions DEFAULTS = new TlsOptions(TLS12, List.of(), List.of(), List.of());

  public TlsOptions {
    minVersion = normaliseVersion(minVersion);
    cipherSuites = List.copyOf(Objects.requireNonNull(cipherSuites, "cipherSuites"));
    alpnProtocols = List.copyOf(Objects.requireNonNull(alpnProtocols, "alpnProtocols"));
    keyExchangeGroups =
        KeyExchangeGroup.normalise(Objects.requireNonNull(keyExchangeGroups, "keyExchangeGroups"));
    for (String suite : cipherSuites) {
      if (suite.isBlank()) {
        throw new IllegalArgumentException(
            "cipherSuites: blank name (expected: cipher suite names)");
      }
    }
    for (String protocol : alpnProtocols) {
      if (protocol.isEmpty()) {
        throw new IllegalArgumentException("alpnProtocols: empty name (expected: e.g. h2)");
      }
    }
  }

  /** TLS 1.2 and 1.3, provider default suites and groups, no ALPN. */
  public static TlsOptions defaults() {
    return DEFAULTS;
  }

  /** These options with another lowest version. */
  public TlsOptions withMinVersion(String version) {
    return new TlsOptions(version, cipherSuites, alpnProtocols, keyExchangeGroups);
  }

  /** These options with another TLS 1.2 cipher suite list. */
  public TlsOptions withCipherSuites(List<String> suites) {
    return new TlsOptions(minVersion, suites, alpnProtocols, keyExchangeGroups);
  }

  /** These options with another ALPN protocol list. */
  public TlsOptions withAlpnProtocols(List<String> protocols) {
    return new TlsOptions(minVersion, cipherSuites, protocols, keyExchangeGroups);
  }

  /**
   * These options with another key-exchange group list, by any name {@link KeyExchangeGroup#of}
   * accepts; empty for the provider's default.
   *
   * @throws IllegalArgumentException if a name is unknown
   */
  public TlsOptions withKeyExchangeGroups(List<String> groups) {
    return new TlsOptions(minVersion, cipherSuites, alpnProtocols, groups);
  }

  /** The protocol versions to enable, newest first. */
  List<String> protocols() {
    return minVersion.equals(TLS13) ? List.of(TLS13) : List.of(TLS13, TLS12);
  }

  private static String normaliseVersion(String version) {
    Objects.requireNonNull(version, "minVersion");
    return switch (version) {
      case "VersionTLS12", "TLSv1.2", "1.2" -> TLS12;
      case "VersionTLS13", "TLSv1.3", "1.3" -> TLS13;
      default ->
          throw new IllegalArgumentException(
              "minVersion: "
                  + version
                  + " (expected: VersionTLS12, VersionTLS13, TLSv1.2 or TLSv1.3)");
    };
  }
}
