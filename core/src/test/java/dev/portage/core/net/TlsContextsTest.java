package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.ssl.SslContext;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Building contexts from PEM files, and the errors for files that cannot be used. */
class TlsContextsTest {

  @TempDir static Path dir;
  private static TestPki pki;

  @BeforeAll
  static void createPki() throws Exception {
    pki = new TestPki(dir);
  }

  @Test
  void buildsServerAndClientContexts() throws Exception {
    SslContext server = TlsContexts.server(pki.serverCert, pki.serverKey, pki.caCert);
    SslContext client = TlsContexts.client(pki.caCert, pki.clientCert, pki.clientKey);

    assertThat(server.isServer()).isTrue();
    assertThat(client.isClient()).isTrue();
  }

  @Test
  void missingFileIsNamed() {
    Path missing = dir.resolve("nope.crt");

    assertThatThrownBy(() -> TlsContexts.server(missing, pki.serverKey, null))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: server certificate file " + missing + ": not found");
    assertThatThrownBy(() -> TlsContexts.client(missing, null, null))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: CA file " + missing + ": not found");
  }

  @Test
  void fileWithoutPemIsRejected() throws Exception {
    Path garbage = TestPki.write(dir.resolve("garbage.pem"), "not a certificate\n");

    assertThatThrownBy(() -> TlsContexts.server(pki.serverCert, pki.serverKey, garbage))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: client CA file " + garbage + ": no PEM block");
  }

  @Test
  void keyFileWithoutKeyIsRejected() {
    assertThatThrownBy(() -> TlsContexts.server(pki.serverCert, pki.serverCert, null))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: server key file " + pki.serverCert + ": 0 private keys (expected: 1)");
  }

  @Test
  void certificateFileWithoutCertificateIsRejected() {
    assertThatThrownBy(() -> TlsContexts.server(pki.serverKey, pki.serverKey, null))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: server certificate file " + pki.serverKey + ": no CERTIFICATE block");
  }

  @Test
  void corruptCertificateIsRejected() throws Exception {
    Path corrupt =
        TestPki.write(
            dir.resolve("corrupt.crt"),
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");

    assertThatThrownBy(() -> TlsContexts.client(corrupt, null, null))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith("tls: CA file " + corrupt + ": malformed certificate");
  }

  @Test
  void encryptedKeyIsRejected() throws Exception {
    Path encrypted =
        TestPki.write(
            dir.resolve("encrypted.key"),
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");

    assertThatThrownBy(() -> TlsContexts.server(pki.serverCert, encrypted, null))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "tls: server key file "
                + encrypted
                + ": unsupported 'ENCRYPTED PRIVATE KEY'"
                + " (expected: unencrypted PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)");
  }

  @Test
  void keyThatDoesNotMatchTheCertificateIsRejected() {
    assertThatThrownBy(() -> TlsContexts.server(pki.serverCert, pki.clientKey, null))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "tls: server key file "
                + pki.clientKey
                + " does not match certificate file "
                + pki.serverCert);
    assertThatThrownBy(() -> TlsContexts.client(pki.caCert, pki.clientCert, pki.serverKey))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "tls: client key file "
                + pki.serverKey
                + " does not match certificate file "
                + pki.clientCert);
  }

  @Test
  void clientCertificateNeedsItsKey() {
    assertThatThrownBy(() -> TlsContexts.client(pki.caCert, pki.clientCert, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cert: " + pki.clientCert + ", key: null (expected: both or neither)");
  }

  @Test
  void unknownCipherSuiteIsRejectedWhenBuilding() {
    TlsOptions options = TlsOptions.defaults().withCipherSuites(List.of("TLS_NOT_A_SUITE"));

    assertThatThrownBy(() -> TlsContexts.server(pki.serverCert, pki.serverKey, null, options))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith("tls: server " + pki.serverCert + " context:");
  }

  @Test
  void readsPkcs1RsaKeys() throws Exception {
    X509Bundle rsa =
        new CertificateBuilder()
            .subject("CN=rsa")
            .rsa2048()
            .setIsCertificateAuthority(true)
            .buildSelfSigned();
    byte[] pkcs8 = rsa.getKeyPair().getPrivate().getEncoded();
    // PKCS#8 = SEQUENCE { version, algorithm, OCTET STRING pkcs1 }: the last element is PKCS#1.
    byte[] pkcs1 = lastElementContent(pkcs8);
    Path key = TestPki.write(dir.resolve("rsa.key"), pem("RSA PRIVATE KEY", pkcs1));
    Path cert = TestPki.write(dir.resolve("rsa.crt"), rsa.getCertificatePEM());

    PrivateKey read = PemFiles.privateKey(key, "test key");

    assertThat(read.getEncoded()).isEqualTo(pkcs8);
    assertThat(TlsContexts.server(cert, key, null).isServer()).isTrue();
  }

  @Test
  void readsSec1EcKeysWithNamedCurve() throws Exception {
    X509Bundle ec =
        new CertificateBuilder()
            .subject("CN=ec")
            .ecp256()
            .setIsCertificateAuthority(true)
            .buildSelfSigned();
    ECPrivateKey original = (ECPrivateKey) ec.getKeyPair().getPrivate();
    byte[] prime256v1 = {0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 0x03, 0x01, 0x07};
    byte[] sec1 =
        tlv(
            0x30,
            concat(
                tlv(0x02, new byte[] {1}),
                tlv(0x04, unsigned32(original.getS())),
                tlv(0xA0, tlv(0x06, prime256v1))));
    Path key = TestPki.write(dir.resolve("ec.key"), pem("EC PRIVATE KEY", sec1));

    ECPrivateKey read = (ECPrivateKey) PemFiles.privateKey(key, "test key");

    assertThat(read.getS()).isEqualTo(original.getS());
    assertThat(read.getParams().getCurve()).isEqualTo(original.getParams().getCurve());
  }

  @Test
  void sec1KeyWithoutCurveIsRejected() throws Exception {
    byte[] sec1 = tlv(0x30, concat(tlv(0x02, new byte[] {1}), tlv(0x04, new byte[32])));
    Path key = TestPki.write(dir.resolve("nocurve.key"), pem("EC PRIVATE KEY", sec1));

    assertThatThrownBy(() -> PemFiles.privateKey(key, "test key"))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "tls: test key file " + key + ": malformed EC PRIVATE KEY: no named curve parameters");
  }

  @Test
  void truncatedPkcs1KeyIsRejected() throws Exception {
    Path key =
        TestPki.write(dir.resolve("short.key"), pem("RSA PRIVATE KEY", new byte[] {0x30, 0x7F, 1}));

    assertThatThrownBy(() -> PemFiles.privateKey(key, "test key"))
        .isInstanceOf(IOException.class)
        .hasMessage("tls: test key file " + key + ": malformed RSA PRIVATE KEY: truncated DER");
  }

  @Test
  void optionsAcceptUpstreamVersionNames() {
    assertThat(TlsOptions.defaults().minVersion()).isEqualTo("TLSv1.2");
    assertThat(TlsOptions.defaults().withMinVersion("VersionTLS13").minVersion())
        .isEqualTo("TLSv1.3");
    assertThat(TlsOptions.defaults().withMinVersion("VersionTLS12").protocols())
        .containsExactly("TLSv1.3", "TLSv1.2");
    assertThat(TlsOptions.defaults().withMinVersion("TLSv1.3").protocols())
        .containsExactly("TLSv1.3");
  }

  @Test
  void optionsRejectOldOrUnknownVersions() {
    assertThatThrownBy(() -> TlsOptions.defaults().withMinVersion("VersionTLS11"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "minVersion: VersionTLS11 (expected: VersionTLS12, VersionTLS13, TLSv1.2 or TLSv1.3)");
    assertThatThrownBy(() -> TlsOptions.defaults().withAlpnProtocols(List.of("")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("alpnProtocols: empty name (expected: e.g. h2)");
  }

  @Test
  void keyExchangeGroupsAcceptGoOpenSslAndIanaNamesInAnyCase() {
    TlsOptions options =
        TlsOptions.defaults()
            .withKeyExchangeGroups(
                List.of("x25519mlkem768", "X25519", "CurveP256", "secp384r1", "p-521", "prime256v1"));

    // Normalised to IANA names, in the given order, each once.
    assertThat(options.keyExchangeGroups())
        .containsExactly("X25519MLKEM768", "x25519", "secp256r1", "secp384r1", "secp521r1");
    assertThat(TlsOptions.defaults().keyExchangeGroups()).isEmpty();
  }

  @Test
  void keyExchangeGroupsRefuseUnknownNames() {
    assertThatThrownBy(() -> TlsOptions.defaults().withKeyExchangeGroups(List.of("x448")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "unknown key-exchange group \"x448\" (expected: X25519MLKEM768, X25519, CurveP256,"
                + " secp256r1, prime256v1, P-256, CurveP384, secp384r1, P-384, CurveP521, secp521r1,"
                + " P-521)");
  }

  @Test
  void keyExchangeGroupsReachTheOpenSslContext() throws Exception {
    TlsOptions options = TlsOptions.defaults().withKeyExchangeGroups(List.of("CurveP256", "x25519"));

    SslContext server = TlsContexts.server(pki.serverCert, pki.serverKey, null, options);
    SslContext client = TlsContexts.client(pki.caCert, null, null, options);

    assertThat(server.isServer()).isTrue();
    assertThat(client.isClient()).isTrue();
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  /** The content of the last element inside the outer DER SEQUENCE. */
  private static byte[] lastElementContent(byte[] der) {
    int[] header = header(der, 0);
    int position = header[0];
    int end = position + header[1];
    byte[] last = null;
    while (position < end) {
      int[] element = header(der, position);
      last = Arrays.copyOfRange(der, element[0], element[0] + element[1]);
      position = element[0] + element[1];
    }
    return last;
  }

  /** {contentStart, contentLength} of the element at {@code at}. */
  private static int[] header(byte[] der, int at) {
    int length = der[at + 1] & 0xFF;
    int start = at + 2;
    if (length >= 0x80) {
      int bytes = length & 0x7F;
      length = 0;
      for (int i = 0; i < bytes; i++) {
        length = (length << 8) | (der[start++] & 0xFF);
      }
    }
    return new int[] {start, length};
  }

  private static byte[] tlv(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    if (content.length < 0x80) {
      out.write(content.length);
    } else {
      out.write(0x81);
      out.write(content.length);
    }
    out.writeBytes(content);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  private static byte[] unsigned32(BigInteger value) {
    byte[] raw = value.toByteArray();
    byte[] fixed = new byte[32];
    int copy = Math.min(raw.length, 32);
    System.arraycopy(raw, raw.length - copy, fixed, 32 - copy, copy);
    return fixed;
  }
}
