package dev.portage.cli;

import dev.portage.control.client.ControlPlaneTls;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The flags of a proxy's connection to the control plane's gRPC port ({@code --destination-ca},
 * {@code --destination-cert}, {@code --destination-key}, {@code --destination-server-name}): TLS when
 * a CA or a client certificate is given, plaintext otherwise. A picocli mixin.
 */
final class ControlPlaneTlsOptions {

  @Option(names = "--destination-ca", paramLabel = "FILE",
      description = "PEM CA of the control plane's certificate: TLS to the control plane (default: plaintext).")
  Path ca;

  @Option(names = "--destination-cert", paramLabel = "FILE",
      description = "PEM client certificate for a control plane that requires one (with --destination-key).")
  Path cert;

  @Option(names = "--destination-key", paramLabel = "FILE", description = "PEM key of --destination-cert.")
  Path key;

  @Option(names = "--destination-server-name", paramLabel = "NAME",
      description = "Name to verify in the control plane's certificate (default: the host of --destination-addr).")
  String serverName;

  /**
   * The TLS settings these flags describe, or null for plaintext.
   *
   * @param defaultServerName used when {@code --destination-server-name} is not given; may be null
   * @throws IllegalArgumentException when a certificate comes without its key or the other way round
   */
  ControlPlaneTls tls(String defaultServerName) {
    if (ca == null && cert == null && key == null) {
      return null;
    }
    return new ControlPlaneTls(ca, cert, key, serverName != null ? serverName : defaultServerName);
  }
}
