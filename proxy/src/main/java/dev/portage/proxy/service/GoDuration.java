package dev.portage.proxy.service;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go's {@code time.ParseDuration} syntax ({@code 10800s}, {@code 3h}, {@code 1m30s}), as kube-proxy writes durations. */
final class GoDuration {

  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

  private GoDuration() {}

  /** The duration {@code text} names; {@code "0"} is zero. */
  static Duration parse(String text, String what) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException(what + ": empty (expected: a duration such as 10800s)");
    }
    if (text.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = PART.matcher(text);
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
    if (end == 0 || end != text.length()) {
      throw new IllegalArgumentException(
          what + ": " + text + " (expected: a duration such as 10800s, 3h, 1m30s)");
    }
    return Duration.ofNanos((long) nanos);
  }
}
