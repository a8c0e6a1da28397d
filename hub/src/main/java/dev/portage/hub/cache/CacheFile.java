package dev.portage.hub.cache;

import dev.portage.hub.codec.Encoding;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.zip.CRC32;

/**
 * The on-disk form of one cached object: a header line {@code PCACHE2 <encoding> <length> <crc32>
 * <rv>\n} followed by the object, JSON or a protobuf body. The length and checksum make a truncated
 * or corrupted file detectable, so it is skipped rather than served; the resourceVersion in the
 * header lets a writer compare freshness without decoding the object. Files of the first format
 * ({@code PCACHE1 <length> <crc32> <rv>}, JSON only) are still read.
 *
 * <p>Reading never trusts the file: it is opened only if it is a regular file (not a link, a FIFO
 * or a device), refused unread when larger than anything the hub writes, and its body is read only
 * after the header has promised exactly the bytes the file holds. Stateless.
 */
final class CacheFile {

  private static final String MAGIC_V1 = "PCACHE1";
  private static final String MAGIC = "PCACHE2";
  /** A header is short; a longer first line is not ours. */
  static final int MAX_HEADER = 256;

  private CacheFile() {}

  /** A decoded file. */
  record Contents(String resourceVersion, Encoding encoding, byte[] body) {}

  static byte[] encode(String resourceVersion, Encoding encoding, byte[] body) {
    CRC32 crc = new CRC32();
    crc.update(body);
    String rv = resourceVersion.isEmpty() ? "-" : resourceVersion;
    byte[] header = (MAGIC + " " + name(encoding) + " " + body.length + " "
        + Long.toHexString(crc.getValue()) + " " + rv + "\n").getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[header.length + body.length];
    System.arraycopy(header, 0, out, 0, header.length);
    System.arraycopy(body, 0, out, header.length, body.length);
    return out;
  }

  /**
   * Reads and checks one file.
   *
   * @param maxBody the largest body the hub writes; a larger file is not read at all
   * @throws java.nio.file.NoSuchFileException if there is no such file
   * @throws CorruptCacheFileException saying what is wrong (not a regular file, too large, no
   *     header, wrong length, bad checksum)
   * @throws IOException if it cannot be read
   */
  static Contents read(Path file, int maxBody) throws IOException, CorruptCacheFileException {
    BasicFileAttributes attrs =
        Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!attrs.isRegularFile()) {
      // A link, a FIFO (whose open would block) or a device was never written by the hub.
      throw new CorruptCacheFileException("not a regular file");
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      long size = ch.size();
      if (size > (long) maxBody + MAX_HEADER) {
        throw new CorruptCacheFileException("file is " + size + " bytes, more than the hub writes ("
            + maxBody + " + header)");
      }
      byte[] head = new byte[(int) Math.min(size, MAX_HEADER)];
      int headRead = readFully(ch, head, 0);
      int nl = -1;
      for (int i = 0; i < headRead; i++) {
        if (head[i] == '\n') {
          nl = i;
          break;
        }
      }
      if (nl < 0) {
        throw new CorruptCacheFileException("no header line");
      }
      Header h = Header.parse(new String(head, 0, nl, StandardCharsets.US_ASCII));
      long bodyLength = size - nl - 1;
      if (h.length != bodyLength) {
        throw new CorruptCacheFileException("body is " + bodyLength + " bytes (header says "
            + h.length + "): truncated or extended");
      }
      byte[] body = new byte[(int) bodyLength];
      if (readFully(ch, body, nl + 1) != body.length) {
        throw new CorruptCacheFileException("file shrank while it was read");
      }
      CRC32 crc = new CRC32();
      crc.update(body);
      if (crc.getValue() != h.crc) {
        throw new CorruptCacheFileException("checksum mismatch");
      }
      return new Contents(h.resourceVersion, h.encoding, body);
    }
  }

  /** Reads into all of {@code into} from {@code position}; returns the bytes read (short at EOF). */
  private static int readFully(FileChannel ch, byte[] into, long position) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(into);
    while (buf.hasRemaining()) {
      if (ch.read(buf, position + buf.position()) < 0) {
        break;
      }
    }
    return buf.position();
  }

  private static String name(Encoding encoding) {
    return encoding == Encoding.PROTOBUF ? "protobuf" : "json";
  }

  /** The parsed header line. */
  private record Header(Encoding encoding, long length, long crc, String resourceVersion) {

    static Header parse(String line) throws CorruptCacheFileException {
      String[] f = line.split(" ");
      int at;
      Encoding encoding;
      if (f.length == 5 && f[0].equals(MAGIC)) {
        encoding = switch (f[1]) {
          case "json" -> Encoding.JSON;
          case "protobuf" -> Encoding.PROTOBUF;
          default -> throw new CorruptCacheFileException("unknown encoding \"" + f[1] + "\"");
        };
        at = 2;
      } else if (f.length == 4 && f[0].equals(MAGIC_V1)) {
        encoding = Encoding.JSON;
        at = 1;
      } else {
        throw new CorruptCacheFileException("malformed header");
      }
      long length;
      long crc;
      try {
        length = Long.parseLong(f[at]);
        crc = Long.parseLong(f[at + 1], 16);
      } catch (NumberFormatException e) {
        throw new CorruptCacheFileException("malformed header");
      }
      if (length < 0) {
        throw new CorruptCacheFileException("malformed header");
      }
      String rv = f[at + 2].equals("-") ? "" : f[at + 2];
      return new Header(encoding, length, crc, rv);
    }
  }

  /** A cache file that fails its type, size, header, length or checksum test. */
  static final class CorruptCacheFileException extends Exception {
    CorruptCacheFileException(String message) {
      super(message, null, false, false);
    }
  }
}
