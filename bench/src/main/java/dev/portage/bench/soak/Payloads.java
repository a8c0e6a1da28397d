package dev.portage.bench.soak;

import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * Deterministic payloads: the bytes of payload {@code (seed, length)} are the same in the harness's
 * clients and its backends, so a receiver can check what it got without having seen what was sent.
 * Stateless and thread-safe.
 */
final class Payloads {
  private Payloads() {}

  /** The {@code length} bytes of payload {@code seed}. */
  static byte[] bytes(long seed, int length) {
    if (length < 0) {
      throw new IllegalArgumentException("length: " + length + " (expected: >= 0)");
    }
    byte[] b = new byte[length];
    new SplittableRandom(seed).nextBytes(b);
    return b;
  }

  /** CRC32C of the whole array. */
  static long crc(byte[] b) {
    CRC32C crc = new CRC32C();
    crc.update(b, 0, b.length);
    return crc.getValue();
  }
}
