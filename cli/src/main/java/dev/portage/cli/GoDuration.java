package dev.portage.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Picocli converter for Go's {@code time.ParseDuration} syntax, which the upstream flags use:
 * {@code 1s}, {@code 500ms}, {@code 1h30m}, {@code 1.5s}, {@code 0}. Stateless.
 */
final class GoDuration implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    if (value.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = PART.matcher(value);
    int end = 0;
    double nanos = 0;
    while (m.find() && m.start() == end) {
      double n = Double.parseDouble(m.group(1));
      nanos += n * switch (m.group(2)) {
        case "ns" -> 1;
        case "us", "µs" -> 1e3;
        case "ms" -> 1e6;
        case "s" -> 1e9;
        case "m" -> 60e9;
        default -> 3600e9;
      };
      end = m.end();
    }
    if (end == 0 || end != value.length()) {
      throw new CommandLine.TypeConversionException(
          "invalid duration '" + value + "' (expected: Go syntax such as 1s, 500ms, 1h30m)");
    }
    return Duration.ofNanos((long) nanos);
  }
}
