package dev.portage.bench.soak;

import dev.portage.core.time.GoDurations;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The soak's command line ({@code --name value} pairs; see {@link Soak}). Immutable.
 *
 * @param jar the runnable portage.jar the components run from
 * @param reportTo Markdown file the report is written to (replacing an older report); null: stdout only
 */
record SoakOptions(Duration duration, long seed, int workers, Path jar, Path workDir, Path reportTo,
    Duration churnInterval, String heap, String label) {

  static final String USAGE = """
      usage: Soak --jar cli/target/portage.jar [--duration 5m] [--seed N] [--workers 8]
                  [--churn-interval 3s] [--heap 256m] [--work-dir DIR] [--report-to FILE] [--label TEXT]""";

  SoakOptions {
    if (duration.compareTo(Duration.ofSeconds(20)) < 0 || duration.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("--duration: " + duration + " (expected: 20s to 10m)");
    }
    if (workers < 4) {
      throw new IllegalArgumentException("--workers: " + workers + " (expected: >= 4, one per path at least)");
    }
    if (churnInterval.isNegative() || churnInterval.isZero()) {
      throw new IllegalArgumentException("--churn-interval: " + churnInterval + " (expected: > 0)");
    }
  }

  static SoakOptions parse(String[] args, long defaultSeed) {
    Duration duration = Duration.ofMinutes(5);
    long seed = defaultSeed;
    int workers = 8;
    Path jar = null;
    Path workDir = null;
    Path reportTo = null;
    Duration churn = Duration.ofSeconds(3);
    String heap = "256m";
    String label = "";
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(name + ": missing value\n" + USAGE);
      }
      String v = args[++i];
      switch (name) {
        case "--duration" -> duration = GoDurations.parse(v);
        case "--seed" -> seed = Long.parseLong(v);
        case "--workers" -> workers = Integer.parseInt(v);
        case "--jar" -> jar = Path.of(v);
        case "--work-dir" -> workDir = Path.of(v);
        case "--report-to" -> reportTo = Path.of(v);
        case "--churn-interval" -> churn = GoDurations.parse(v);
        case "--heap" -> heap = v;
        case "--label" -> label = v;
        default -> throw new IllegalArgumentException("unknown option " + name + "\n" + USAGE);
      }
    }
    if (jar == null) {
      throw new IllegalArgumentException("--jar is required\n" + USAGE);
    }
    return new SoakOptions(duration, seed, workers, jar, workDir, reportTo, churn, heap, label);
  }
}
