package dev.portage.core.net;

import java.io.ByteArrayOutputStream;

/**
 * Wraps legacy private key encodings in the PKCS#8 envelope the JDK's {@code KeyFactory} reads: RSA
 * keys from PKCS#1 (RFC 8017) and EC keys from SEC1 (RFC 5915). Only the DER needed for that is
 * parsed; malformed input fails with {@link IllegalArgumentException}. Stateless.
 */
final class Pkcs8 {

  private static final int INTEGER = 0x02;
  private static final int OCTET_STRING = 0x04;
  private static final int NULL = 0x05;
  private static final int OID = 0x06;
  private static final int SEQUENCE = 0x30;
  private static final int EC_PARAMETERS = 0xA0;

  /** 1.2.840.113549.1.1.1 rsaEncryption. */
  private static final byte[] RSA_ENCRYPTION = {
    0x2A, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xF7, 0x0D, 0x01, 0x01, 0x01
  };

  /** 1.2.840.10045.2.1 id-ecPublicKey. */
  private static final byte[] EC_PUBLIC_KEY = {
    0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 0x02, 0x01
  };

  private Pkcs8() {}

  static byte[] fromPkcs1Rsa(byte[] pkcs1) {
    new Reader(pkcs1).expect(SEQUENCE); // fail early on garbage
    byte[] algorithm = tlv(SEQUENCE, concat(tlv(OID, RSA_ENCRYPTION), tlv(NULL, new byte[0])));
    return privateKeyInfo(algorithm, pkcs1);
  }

  static byte[] fromSec1Ec(byte[] sec1) {
    // ECPrivateKey ::= SEQUENCE { version, privateKey OCTET STRING, [0] parameters, [1] publicKey }
    Reader key = new Reader(new Reader(sec1).expect(SEQUENCE));
    key.expect(INTEGER);
    key.expect(OCTET_STRING);
    byte[] curve = null;
    while (key.hasMore()) {
      int tag = key.peekTag();
      byte[] content = key.next();
      if (tag == EC_PARAMETERS) {
        curve = new Reader(content).expect(OID);
      }
    }
    if (curve == null) {
      throw new IllegalArgumentException("no named curve parameters");
    }
    byte[] algorithm = tlv(SEQUENCE, concat(tlv(OID, EC_PUBLIC_KEY), tlv(OID, curve)));
    return privateKeyInfo(algorithm, sec1);
  }

  private static byte[] privateKeyInfo(byte[] algorithm, byte[] key) {
    return tlv(SEQUENCE, concat(tlv(INTEGER, new byte[] {0}), algorithm, tlv(OCTET_STRING, key)));
  }

  private static byte[] tlv(int tag, byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
    out.write(tag);
    int length = content.length;
    if (length < 0x80) {
      out.write(length);
    } else {
      int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(length >>> (8 * i));
      }
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

  /** Reads consecutive DER elements from one buffer. */
  private static final class Reader {
    private final byte[] der;
    private int position;

    Reader(byte[] der) {
      this.der = der;
    }

    boolean hasMore() {
      return position < der.length;
    }

    int peekTag() {
      if (!hasMore()) {
        throw new IllegalArgumentException("truncated DER");
      }
      return der[position] & 0xFF;
    }

    byte[] expect(int tag) {
      int actual = peekTag();
      if (actual != tag) {
        throw new IllegalArgumentException(
            String.format("DER tag 0x%02X at %d (expected: 0x%02X)", actual, position, tag));
      }
      return next();
    }

    /** The content of the next element. */
    byte[] next() {
      position++; // tag
      int length = readByte();
      if (length >= 0x80) {
        int bytes = length & 0x7F;
        if (bytes == 0 || bytes > 3) {
          throw new IllegalArgumentException("unsupported DER length form");
        }
        length = 0;
        for (int i = 0; i < bytes; i++) {
          length = (length << 8) | readByte();
        }
      }
      if (length > der.length - position) {
        throw new IllegalArgumentException("truncated DER");
      }
      byte[] content = new byte[length];
      System.arraycopy(der, position, content, 0, length);
      position += length;
      return content;
    }

    private int readByte() {
      if (!hasMore()) {
        throw new IllegalArgumentException("truncated DER");
      }
      return der[position++] & 0xFF;
    }
  }
}
