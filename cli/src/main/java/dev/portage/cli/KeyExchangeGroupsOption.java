package dev.portage.cli;

import dev.portage.core.net.KeyExchangeGroup;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Portage's {@code --tls-key-exchange-groups} for the tunnel server and agent (upstream has no such
 * flag; Go picks X25519MLKEM768 first by default, as Netty's BoringSSL does): a picocli mixin.
 */
final class KeyExchangeGroupsOption {
  static final String FLAG = "--tls-key-exchange-groups";

  @Option(names = FLAG, split = ",", paramLabel = "GROUP",
      description = "Portage only: TLS key-exchange groups for every TLS listener and dialer of this command,"
          + " comma-separated in preference order, by Go, OpenSSL or IANA name (X25519MLKEM768, X25519,"
          + " CurveP256/secp256r1/prime256v1/P-256, CurveP384/secp384r1/P-384, CurveP521/secp521r1/P-521);"
          + " default: the TLS library's list, post-quantum X25519MLKEM768 first.")
  List<String> groups;

  /**
   * The groups by IANA name, each once; empty when the flag is absent.
   *
   * @throws IllegalArgumentException naming the flag, the unknown group and the accepted names
   */
  List<String> ianaNames() {
    return KeyExchangeGroup.normalise(FLAG, groups);
  }
}
