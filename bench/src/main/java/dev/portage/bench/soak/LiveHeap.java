package dev.portage.bench.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A child JVM's live heap: {@code jcmd <pid> GC.run} (a full collection), then the "used" figure of
 * {@code jcmd <pid> GC.heap_info}. Taken twice per component (after warm-up and after the load
 * stopped): with the heap pre-touched, RSS shows off-heap growth and this shows on-heap growth.
 * Blocking; any thread.
 */
final class LiveHeap {
  private static final Pattern USED = Pattern.compile("used (\\d+)K");

  private LiveHeap() {}

  /** Bytes of heap in use after a full GC, or -1 if jcmd failed (process gone, attach refused). */
  static long measure(long pid) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      if (run(jcmd, pid, "GC.run") == null) {
        return -1;
      }
      String info = run(jcmd, pid, "GC.heap_info");
      if (info == null) {
        return -1;
      }
      Matcher m = USED.matcher(info);
      return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static String run(Path jcmd, long pid, String command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return null;
    }
    return p.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : null;
  }
}
