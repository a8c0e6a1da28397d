package dev.portage.core.net;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads X.509 certificates and private keys from PEM files, with errors that name the file and what
 * was wrong with it. Keys may be PKCS#8 ({@code PRIVATE KEY}), PKCS#1 ({@code RSA PRIVATE KEY}) or
 * SEC1 ({@code EC PRIVATE KEY}), the forms Kubernetes tooling writes. Stateless.
 */
final class PemFiles {

  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)\\s*-----END \\1-----");

  private PemFiles() {}

  /**
   * Every {@code CERTIFICATE} block of {@code file}, in file order.
   *
   * @param role what the file is for, for messages ("server certificate", "client CA")
   */
  static List<X509Certificate> certificates(Path file, String role) throws IOException {
    List<X509Certificate> certificates = new ArrayList<>();
    CertificateFactory factory;
    try {
      factory = CertificateFactory.getInstance("X.509");
    } catch (CertificateException e) {
      throw new IllegalStateException("X.509 certificates unsupported by this JVM", e);
    }
    for (Block block : blocks(file, role)) {
      if (!block.type().equals("CERTIFICATE")) {
        continue;
      }
      try {
        certificates.add(
            (X509Certificate) factory.generateCertificate(new ByteArrayInputStream(block.der())));
      } catch (CertificateException e) {
        throw new IOException(
            "tls: " + role + " file " + file + ": malformed certificate: " + e.getMessage(), e);
      }
    }
    if (certificates.isEmpty()) {
      throw new IOException("tls: " + role + " file " + file + ": no CERTIFICATE block");
    }
    return certificates;
  }

  /** The one private key of {@code file}. */
  static PrivateKey privateKey(Path file, String role) throws IOException {
    List<Block> keys = new ArrayList<>();
    for (Block block : blocks(file, role)) {
      if (block.type().endsWith("PRIVATE KEY")) {
        keys.add(block);
      }
    }
    if (keys.size() != 1) {
      throw new IOException(
          "tls: " + role + " file " + file + ": " + keys.size() + " private keys (expected: 1)");
    }
    Block key = keys.get(0);
    byte[] pkcs8;
    try {
      pkcs8 =
          switch (key.type()) {
            case "PRIVATE KEY" -> key.der();
            case "RSA PRIVATE KEY" -> Pkcs8.fromPkcs1Rsa(key.der());
            case "EC PRIVATE KEY" -> Pkcs8.fromSec1Ec(key.der());
            default ->
                throw new IOException(
                    "tls: "
                        + role
                        + " file "
                        + file
                        + ": unsupported '"
                        + key.type()
                        + "' (expected: unencrypted PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE"
                        + " KEY)");
          };
    } catch (IllegalArgumentException e) {
      throw new IOException(
          "tls: " + role + " file " + file + ": malformed " + key.type() + ": " + e.getMessage(),
          e);
    }
    return decode(pkcs8, file, role);
  }

  private static PrivateKey decode(byte[] pkcs8, Path file, String role) throws IOException {
    GeneralSecurityException last = null;
    for (String algorithm : List.of("RSA", "EC", "Ed25519", "RSASSA-PSS")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
      } catch (GeneralSecurityException e) {
        last = e;
      }
    }
    throw new IOException(
        "tls: " + role + " file " + file + ": unsupported or malformed private key", last);
  }

  private record Block(String type, byte[] der) {}

  private static List<Block> blocks(Path file, String role) throws IOException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new IOException("tls: " + role + " file " + file + ": not found", e);
    } catch (AccessDeniedException e) {
      throw new IOException("tls: " + role + " file " + file + ": permission denied", e);
    } catch (IOException e) {
      throw new IOException("tls: " + role + " file " + file + ": cannot read: " + e, e);
    }
    List<Block> blocks = new ArrayList<>();
    Matcher matcher = BLOCK.matcher(text);
    while (matcher.find()) {
      try {
        blocks.add(new Block(matcher.group(1), Base64.getMimeDecoder().decode(matcher.group(2))));
      } catch (IllegalArgumentException e) {
        throw new IOException(
            "tls: " + role + " file " + file + ": bad base64 in " + matcher.group(1), e);
      }
    }
    if (blocks.isEmpty()) {
      throw new IOException("tls: " + role + " file " + file + ": no PEM block");
    }
    return blocks;
  }
}
