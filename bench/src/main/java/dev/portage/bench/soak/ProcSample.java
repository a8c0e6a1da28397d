package dev.portage.bench.soak;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One reading of a process from {@code /proc/<pid>}: resident set (VmRSS), threads, open file
 * descriptors. {@link #read} returns null when the process is gone (or /proc is not there).
 *
 * @param atNanos when it was taken, nanoseconds since the soak started
 */
record ProcSample(long atNanos, long pid, long rssBytes, int threads, int fds) {

  static ProcSample read(long pid, long atNanos) {
    Path dir = Path.of("/proc", Long.toString(pid));
    try {
      long rss = -1;
      int threads = -1;
      for (String line : Files.readAllLines(dir.resolve("status"))) {
        if (line.startsWith("VmRSS:")) {
          rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        } else if (line.startsWith("Threads:")) {
          threads = Integer.parseInt(line.replaceAll("[^0-9]", ""));
        }
      }
      int fds = 0;
      try (DirectoryStream<Path> fd = Files.newDirectoryStream(dir.resolve("fd"))) {
        for (Path ignored : fd) {
          fds++;
        }
      }
      return rss < 0 || threads < 0 ? null : new ProcSample(atNanos, pid, rss, threads, fds);
    } catch (IOException | NumberFormatException | SecurityException e) {
      return null; // exited between the listing and the read, or a zombie without status
    }
  }
}
