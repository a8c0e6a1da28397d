package dev.portage.cli.flags;

import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.event.Level;
import picocli.CommandLine.Option;

/**
 * klog's command-line flags, for commands whose upstream logs with klog (Konnectivity, YurtHub,
 * kube-proxy): a picocli mixin. The flags with an equivalent take effect — {@code -v} sets the log
 * level, {@code --log-file} (with {@code --log-file-max-size}) adds a file, {@code --logtostderr=false}
 * with {@code --stderrthreshold} and {@code --alsologtostderr} decide what stays on stderr — and the
 * others ({@link #WITHOUT_EFFECT}) are accepted with one WARN line each. klog registers its flags with
 * underscores ({@code --log_file}); both spellings are accepted, as pflag's normaliser does upstream.
 *
 * <p>One difference from klog: {@code --log-file} is written even while {@code --logtostderr} is true
 * (klog then ignores the file); stderr keeps every line in that case, so nothing is lost either way.
 */
public final class KlogOptions {

  /** klog flags Portage accepts and ignores. */
  public static final UpstreamFlags WITHOUT_EFFECT = UpstreamFlags.pflag("klog")
      .value("--vmodule", "--log-dir", "--log_dir", "--log-backtrace-at", "--log_backtrace_at",
          "--log-flush-frequency")
      .bool("--skip-headers", "--skip_headers", "--skip-log-headers", "--skip_log_headers",
          "--one-output", "--one_output", "--add-dir-header", "--add_dir_header");

  @Option(names = {"-v", "--v"}, paramLabel = "N",
      description = "klog verbosity: 0-3 logs at INFO, 4-5 at DEBUG, 6 and up at TRACE; --log-level wins when both are given.")
  Integer verbosity;

  @Option(names = "--logtostderr", arity = "0..1", fallbackValue = "true", defaultValue = "true",
      description = "Log to stderr (default: ${DEFAULT-VALUE}); false keeps stderr to lines at --stderrthreshold and above.")
  boolean logToStderr;

  @Option(names = "--alsologtostderr", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "With --logtostderr=false, still write every line to stderr (default: ${DEFAULT-VALUE}).")
  boolean alsoLogToStderr;

  @Option(names = {"--log-file", "--log_file"}, paramLabel = "PATH",
      description = "Also write the log to this file.")
  Path logFile;

  @Option(names = {"--log-file-max-size", "--log_file_max_size"}, defaultValue = "1800", paramLabel = "MB",
      description = "Size in megabytes at which --log-file starts over, keeping one previous file as <file>.1; 0 = no limit (default: ${DEFAULT-VALUE}).")
  long logFileMaxSizeMb;

  @Option(names = "--stderrthreshold", defaultValue = "2", paramLabel = "LEVEL",
      description = "With --logtostderr=false, lines at or above this level still go to stderr: INFO, WARNING, ERROR, FATAL or 0-3 (default: ERROR).")
  String stderrThreshold;

  /** What the given flags ask of the log output; throws IllegalArgumentException on a bad value. */
  public LogSettings settings() {
    if (verbosity != null && verbosity < 0) {
      throw new IllegalArgumentException("-v: " + verbosity + " (expected: 0 or more)");
    }
    if (logFileMaxSizeMb < 0) {
      throw new IllegalArgumentException("--log-file-max-size: " + logFileMaxSizeMb + " (expected: 0 or more)");
    }
    Level level = verbosity == null ? null : levelOf(verbosity);
    Level threshold = logToStderr || alsoLogToStderr ? null : threshold(stderrThreshold);
    return new LogSettings(level, logFile, logFileMaxSizeMb * 1024 * 1024, threshold);
  }

  /** The log level a klog verbosity stands for (klog's conventions: 4 is debug, 6+ traces requests). */
  static Level levelOf(int verbosity) {
    if (verbosity >= 6) {
      return Level.TRACE;
    }
    return verbosity >= 4 ? Level.DEBUG : Level.INFO;
  }

  private static Level threshold(String value) {
    return switch (value.toUpperCase(Locale.ROOT)) {
      case "0", "INFO" -> Level.INFO;
      case "1", "WARNING" -> Level.WARN;
      case "2", "ERROR", "3", "FATAL" -> Level.ERROR;
      default -> throw new IllegalArgumentException(
          "--stderrthreshold: '" + value + "' (expected: INFO, WARNING, ERROR, FATAL or 0-3)");
    };
  }
}
