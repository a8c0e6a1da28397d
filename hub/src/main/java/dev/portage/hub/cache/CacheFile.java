package dev.portage.hub.cache;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * The on-disk form of one cached object: a header line {@code PCACHE1 <length> <crc32> <rv>\n}
 * followed by the JSON. The length and checksum make a truncated or corrupted file detectable, so it
 * is skipped rather than served; the resourceVersion in the header lets a writer compare freshness
 * without parsing the JSON.
 */
final class CacheFile {

  private static final String MAGIC = "PCACHE1";
  /** A header is short; a longer first line is not ours. */
  private static final int MAX_HEADER = 256;

  private CacheFile() {}

  /** A decoded file. */
  record Contents(String resourceVersion, byte[] body) {}

  static byte[] encode(String resourceVersion, byte[] body) {
    CRC32 crc = new CRC32();
    crc.update(body);
    String rv = resourceVersion.isEmpty() ? "-" : resourceVersion;
    byte[] header =
        (MAGIC + " " + body.length + " " + Long.toHexString(crc.getValue()) + " " + rv + "\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[header.length + body.length];
    System.arraycopy(header, 0, out, 0, header.length);
    System.arraycopy(body, 0, out, header.length, body.length);
    return out;
  }

  /**
   * Decodes a whole file.
   *
   * @throws CorruptCacheFileException saying what is wrong (no header, wrong length, bad checksum)
   */
  static Contents decode(byte[] file) throws CorruptCacheFileException {
    int nl = -1;
    for (int i = 0; i < Math.min(file.length, MAX_HEADER); i++) {
      if (file[i] == '\n') {
        nl = i;
        break;
      }
    }
    if (nl < 0) {
      throw new CorruptCacheFileException("no header line");
    }
    String[] fields = new String(file, 0, nl, StandardCharsets.US_ASCII).split(" ");
    if (fields.length != 4 || !fields[0].equals(MAGIC)) {
      throw new CorruptCacheFileException("malformed header");
    }
    long length;
    long crcValue;
    try {
      length = Long.parseLong(fields[1]);
      crcValue = Long.parseLong(fields[2], 16);
    } catch (NumberFormatException e) {
      throw new CorruptCacheFileException("malformed header");
    }
    int bodyLength = file.length - nl - 1;
    if (length != bodyLength) {
      throw new CorruptCacheFileException(
          "body is " + bodyLength + " bytes (header says " + length + "): truncated or extended");
    }
    CRC32 crc = new CRC32();
    crc.update(file, nl + 1, bodyLength);
    if (crc.getValue() != crcValue) {
      throw new CorruptCacheFileException("checksum mismatch");
    }
    byte[] body = new byte[bodyLength];
    System.arraycopy(file, nl + 1, body, 0, bodyLength);
    return new Contents(fields[3].equals("-") ? "" : fields[3], body);
  }

  /** A cache file that fails its header, length or checksum test. */
  static final class CorruptCacheFileException extends Exception {
    CorruptCacheFileException(String message) {
      super(message, null, false, false);
    }
  }
}
