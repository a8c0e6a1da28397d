package dev.portage.tunnel.interop;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/** Deterministic pseudo-random test bytes and their SHA-256, the checksum both peers report. */
final class Payload {
  private Payload() {}

  static byte[] bytes(long seed, int size) {
    byte[] b = new byte[size];
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < size; i++) {
      b[i] = (byte) r.nextInt(256);
    }
    return b;
  }

  static String sha256(byte[] b) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
