package dev.portage.cli;

import dev.portage.core.time.GoDurations;
import java.time.Duration;
import picocli.CommandLine;

/**
 * Picocli converter for durations in Go's {@code time.ParseDuration} syntax ({@code 0}, {@code 500ms},
 * {@code 1h30m}, {@code 1.5s}), so flags copied from upstream Go components' manifests work unchanged.
 * Negative values are refused: no Portage flag takes one.
 */
final class GoDuration implements CommandLine.ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    Duration d;
    try {
      d = GoDurations.parse(value);
    } catch (IllegalArgumentException e) {
      d = null;
    }
    if (d == null || d.isNegative()) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration (expected: Go syntax such as 0, 500ms, 30s, 1m30s, 1h)");
    }
    return d;
  }
}
