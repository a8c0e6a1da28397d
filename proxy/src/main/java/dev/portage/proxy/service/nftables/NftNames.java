package dev.portage.proxy.service.nftables;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * kube-proxy's nftables object names: {@code prefix + HASH + "-" + base}, where HASH is the first 8
 * characters of the base32 encoding of SHA-256({@code base}). The hash keeps names unique when
 * different bases would otherwise read alike; the base keeps them readable in {@code nft list}.
 */
final class NftNames {

  private static final char[] BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".toCharArray();
  /** Longer bases are cut, as kube-proxy does for endpoint chains (the hash still tells them apart). */
  private static final int MAX_BASE = 240;

  private NftNames() {}

  /** {@code prefix + HASH + "-" + base}, at most 256 characters. */
  static String hashed(String prefix, String base) {
    String shown = base.length() > MAX_BASE ? base.substring(0, MAX_BASE - 3) + "..." : base;
    return prefix + hash(base) + "-" + shown;
  }

  /** The first 8 base32 characters of SHA-256({@code text}), i.e. its first 40 bits. */
  static String hash(String text) {
    byte[] digest;
    try {
      digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
    long bits = 0;
    for (int i = 0; i < 5; i++) {
      bits = (bits << 8) | (digest[i] & 0xff);
    }
    char[] out = new char[8];
    for (int i = 7; i >= 0; i--) {
      out[i] = BASE32[(int) (bits & 31)];
      bits >>>= 5;
    }
    return new String(out);
  }
}
