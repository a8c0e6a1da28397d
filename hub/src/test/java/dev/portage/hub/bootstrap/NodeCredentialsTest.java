package dev.portage.hub.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeCredentialsTest {

  private static final NodeCredentials.Flags NO_FLAGS =
      new NodeCredentials.Flags(null, null, null, null, null, "");

  @TempDir Path dir;
  private X509Bundle ca;
  private X509Bundle node;
  private Path root;

  @BeforeEach
  void setUp() throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder().notBefore(now.minus(1, ChronoUnit.HOURS))
        .notAfter(now.plus(1, ChronoUnit.DAYS)).ecp256();
    ca = base.copy().subject("CN=cluster-ca").setIsCertificateAuthority(true).buildSelfSigned();
    node = base.copy().subject("CN=system:node:edge-1").buildIssuedBy(ca);
    root = dir.resolve("var-lib-yurthub");
  }

  private NodeBootstrap bootstrap(Path file, NodeBootstrap.Mode mode, List<String> pins) {
    return new NodeBootstrap(root, file, mode, pins, true);
  }

  private Path kubeconfig(String user, String cluster) throws IOException {
    return Files.writeString(dir.resolve("bootstrap-hub.conf"), """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster:
            server: https://10.0.0.1:6443
        %s
        contexts:
        - name: ctx
          context: {cluster: c, user: u}
        current-context: ctx
        users:
        - name: u
          user:
        %s
        """.formatted(cluster, user));
  }

  @Test
  void explicitFlagsWinOverEveryOtherSource() throws Exception {
    Files.createDirectories(root.resolve("pki"));
    Files.writeString(root.resolve("pki/ca.crt"), ca.getCertificatePEM());
    Files.writeString(root.resolve("pki/yurthub-current.pem"), "unused");
    NodeCredentials.Flags flags = new NodeCredentials.Flags(Path.of("/flags/ca.crt"),
        Path.of("/flags/c.pem"), Path.of("/flags/k.pem"), Path.of("/flags/s.pem"),
        Path.of("/flags/sk.pem"), "flag.token");
    NodeCredentials c = NodeCredentials.resolve(flags,
        bootstrap(kubeconfig("      token: file.token", ""), NodeBootstrap.Mode.TOKEN, List.of()));
    assertThat(c).isEqualTo(new NodeCredentials(Path.of("/flags/ca.crt"), Path.of("/flags/c.pem"),
        Path.of("/flags/k.pem"), Path.of("/flags/s.pem"), Path.of("/flags/sk.pem"), "flag.token",
        c.sources()));
    assertThat(c.sources()).contains("--ca-file", "--client-cert-file", "--join-token");
  }

  @Test
  void aBootstrapKubeconfigGivesTheCaKeptUnderTheRootDirAndTheToken() throws Exception {
    String caData = Base64.getEncoder().encodeToString(ca.getCertificatePEM().getBytes());
    Path file = kubeconfig("      token: abcdef.0123456789abcdef",
        "    certificate-authority-data: " + caData);
    NodeCredentials c = NodeCredentials.resolve(NO_FLAGS,
        bootstrap(file, NodeBootstrap.Mode.TOKEN, List.of()));
    assertThat(c.caFile()).isEqualTo(root.resolve("pki/ca.crt"));
    assertThat(Files.readString(c.caFile())).isEqualTo(ca.getCertificatePEM());
    assertThat(c.token()).isEqualTo("abcdef.0123456789abcdef");
    assertThat(c.clientCertFile()).isNull();
    assertThat(c.serverCertFile()).isNull();
    // Started again: the same file, unchanged.
    long modified = Files.getLastModifiedTime(c.caFile()).toMillis();
    assertThat(NodeCredentials.resolve(NO_FLAGS, bootstrap(file, NodeBootstrap.Mode.TOKEN,
        List.of())).caFile()).isEqualTo(c.caFile());
    assertThat(Files.getLastModifiedTime(c.caFile()).toMillis()).isEqualTo(modified);
  }

  @Test
  void filesNamedInTheKubeconfigResolveAgainstItsDirectoryAndInlineClientCertsAreKeptPrivate()
      throws Exception {
    Files.writeString(dir.resolve("ca.pem"), ca.getCertificatePEM());
    Files.writeString(dir.resolve("token"), "from.file\n");
    String cert = Base64.getEncoder().encodeToString(node.getCertificatePEM().getBytes());
    String key = Base64.getEncoder().encodeToString(node.getPrivateKeyPEM().getBytes());
    NodeCredentials c = NodeCredentials.resolve(NO_FLAGS, bootstrap(kubeconfig(
        "      tokenFile: token\n      client-certificate-data: " + cert
            + "\n      client-key-data: " + key,
        "    certificate-authority: ca.pem"), NodeBootstrap.Mode.TOKEN, List.of()));
    assertThat(c.caFile()).isEqualTo(root.resolve("pki/ca.crt"));
    assertThat(c.token()).isEqualTo("from.file");
    assertThat(c.clientCertFile()).isEqualTo(root.resolve("pki/yurthub-current.pem"))
        .isEqualTo(c.clientKeyFile());
    assertThat(Files.readString(c.clientCertFile())).contains("BEGIN CERTIFICATE")
        .contains("PRIVATE KEY");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(c.clientCertFile())))
        .isEqualTo("rw-------");
  }

  @Test
  void aYurtHubPkiDirectoryIsUsedWhenNothingElseIsGiven() throws Exception {
    Path pki = Files.createDirectories(root.resolve("pki"));
    Files.writeString(pki.resolve("ca.crt"), ca.getCertificatePEM());
    Files.writeString(pki.resolve("yurthub-current.pem"),
        node.getCertificatePEM() + node.getPrivateKeyPEM());
    Files.writeString(pki.resolve("yurthub-server-current.pem"),
        node.getCertificatePEM() + node.getPrivateKeyPEM());
    NodeCredentials c = NodeCredentials.resolve(NO_FLAGS,
        bootstrap(null, NodeBootstrap.Mode.TOKEN, List.of()));
    assertThat(c.caFile()).isEqualTo(pki.resolve("ca.crt"));
    assertThat(c.clientCertFile()).isEqualTo(pki.resolve("yurthub-current.pem"));
    assertThat(c.serverCertFile()).isEqualTo(pki.resolve("yurthub-server-current.pem"))
        .isEqualTo(c.serverKeyFile());
    assertThat(c.token()).isEmpty();
    assertThat(c.sources()).contains(pki.toString());
  }

  @Test
  void kubeletCertificateModeUsesTheKubeletsClientCertificateAndSaysWhenItIsMissing()
      throws Exception {
    Path kubelet = Files.writeString(dir.resolve("kubelet-client-current.pem"),
        node.getCertificatePEM() + node.getPrivateKeyPEM());
    NodeCredentials c = NodeCredentials.resolve(NO_FLAGS,
        bootstrap(null, NodeBootstrap.Mode.KUBELET_CERTIFICATE, List.of()), kubelet);
    assertThat(c.clientCertFile()).isEqualTo(kubelet).isEqualTo(c.clientKeyFile());
    assertThatThrownBy(() -> NodeCredentials.resolve(NO_FLAGS,
        bootstrap(null, NodeBootstrap.Mode.KUBELET_CERTIFICATE, List.of()),
        dir.resolve("missing.pem")))
        .isInstanceOf(IOException.class).hasMessageContaining("missing.pem is missing");
  }

  @Test
  void theCaMustMatchAPinnedHashWhenHashesAreGiven() throws Exception {
    Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getCertificatePEM());
    String pin = "sha256:" + NodeCredentials.publicKeyHash(ca.getCertificate());
    NodeCredentials.Flags flags = new NodeCredentials.Flags(caFile, null, null, null, null, "");
    assertThat(NodeCredentials.resolve(flags, bootstrap(null, NodeBootstrap.Mode.TOKEN,
        List.of("sha256:" + "00".repeat(32), pin.toUpperCase().replace("SHA256", "sha256"))))
        .caFile()).isEqualTo(caFile);
    assertThatThrownBy(() -> NodeCredentials.resolve(flags, bootstrap(null,
        NodeBootstrap.Mode.TOKEN, List.of("sha256:" + "00".repeat(32)))))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("does not match --discovery-token-ca-cert-hash").hasMessageContaining(pin);
    assertThatThrownBy(() -> NodeCredentials.resolve(NO_FLAGS, bootstrap(null,
        NodeBootstrap.Mode.TOKEN, List.of(pin))))
        .isInstanceOf(IOException.class).hasMessageContaining("no CA to check");
  }

  @Test
  void badSettingsAreRefusedWithWhatWasExpected() throws Exception {
    assertThatThrownBy(() -> bootstrap(null, NodeBootstrap.Mode.TOKEN, List.of("md5:abc")))
        .hasMessageContaining("--discovery-token-ca-cert-hash: md5:abc (expected: sha256:<64 hex digits>)");
    assertThatThrownBy(() -> bootstrap(null, NodeBootstrap.Mode.TOKEN, List.of("sha256:" + "zz".repeat(32))))
        .hasMessageContaining("expected: sha256:<64 hex digits>");
    assertThatThrownBy(() -> new NodeBootstrap(root, null, NodeBootstrap.Mode.TOKEN, List.of(), false))
        .hasMessageContaining("--discovery-token-unsafe-skip-ca-verification=false without");
    assertThatThrownBy(() -> NodeBootstrap.Mode.parse("x509"))
        .hasMessageContaining("--bootstrap-mode: x509 (expected: token or kubeletcertificate)");
    Path noContext = Files.writeString(dir.resolve("empty.conf"), "apiVersion: v1\nkind: Config\n");
    assertThatThrownBy(() -> NodeCredentials.resolve(NO_FLAGS,
        bootstrap(noContext, NodeBootstrap.Mode.TOKEN, List.of())))
        .isInstanceOf(IOException.class).hasMessageContaining("empty.conf: no context");
    Path notYaml = Files.writeString(dir.resolve("garbage.conf"), "{{{");
    assertThatThrownBy(() -> NodeCredentials.resolve(NO_FLAGS,
        bootstrap(notYaml, NodeBootstrap.Mode.TOKEN, List.of())))
        .isInstanceOf(IOException.class).hasMessageContaining("garbage.conf: not a kubeconfig");
  }
}
