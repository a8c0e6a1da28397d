package dev.portage.hub.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The one file-system step of {@link DiskCache} that tests replace: writing bytes to a temp file.
 * The seam lets a test simulate a full disk ({@code ENOSPC}) part-way through a write; production
 * code uses {@link #DIRECT}. Called on the cache writer thread; implementations must be thread-safe.
 */
@FunctionalInterface
public interface FileWrites {

  /** Writes all of {@code data} to {@code channel}; the real one loops over {@code write}. */
  void writeFully(FileChannel channel, ByteBuffer data) throws IOException;

  FileWrites DIRECT =
      (channel, data) -> {
        while (data.hasRemaining()) {
          channel.write(data);
        }
      };
}
