package dev.portage.cli.flags;

import java.nio.file.Path;
import org.slf4j.event.Level;

/**
 * What klog's flags ask of the log output, in logback's terms.
 *
 * @param level the root level {@code -v} asks for, or null when {@code -v} was not given
 * @param file the file every line also goes to, or null
 * @param fileMaxBytes the size at which the file starts over (one previous file kept), 0 for no limit
 * @param stderrThreshold the lowest level still written to stderr, or null for every line
 */
public record LogSettings(Level level, Path file, long fileMaxBytes, Level stderrThreshold) {

  /** No klog flag given: every line to stderr at the default level. */
  public static final LogSettings NONE = new LogSettings(null, null, 0, null);
}
