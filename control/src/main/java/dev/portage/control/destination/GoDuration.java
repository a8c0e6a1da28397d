package dev.portage.control.destination;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;

/**
 * Parses Go duration strings as ServiceProfiles carry them ({@code "1s"}, {@code "250ms"}, {@code
 * "1m30s"}, {@code "1.5h"}, {@code "300us"}, {@code "0"}): a sequence of decimal numbers, each with a
 * unit of ns, us (µs, μs), ms, s, m or h, with an optional sign.
 */
final class GoDuration {

  private GoDuration() {}

  /**
   * @throws IllegalArgumentException naming the bad input
   */
  static Duration parse(String s) {
    if (s == null || s.isEmpty()) {
      throw new IllegalArgumentException("duration: empty (expected: e.g. 250ms, 1s, 1m30s)");
    }
    int i = 0;
    boolean negative = false;
    if (s.charAt(0) == '-' || s.charAt(0) == '+') {
      negative = s.charAt(0) == '-';
      i++;
    }
    if (s.substring(i).equals("0")) {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw bad(s);
    }
    BigDecimal totalNanos = BigDecimal.ZERO;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      String number = s.substring(start, i);
      if (number.isEmpty() || number.equals(".") || number.indexOf('.') != number.lastIndexOf('.')) {
        throw bad(s);
      }
      int unitStart = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      long unitNanos =
          switch (s.substring(unitStart, i)) {
            case "ns" -> 1L;
            case "us", "µs", "μs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw bad(s);
          };
      totalNanos = totalNanos.add(new BigDecimal(number).multiply(BigDecimal.valueOf(unitNanos)));
    }
    long nanos;
    try {
      nanos = totalNanos.setScale(0, RoundingMode.DOWN).longValueExact();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("duration: " + s + " (expected: at most ~292 years)");
    }
    return Duration.ofNanos(negative ? -nanos : nanos);
  }

  /** The protobuf form of a duration. */
  static com.google.protobuf.Duration toProto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  private static IllegalArgumentException bad(String s) {
    return new IllegalArgumentException("duration: \"" + s + "\" (expected: e.g. 250ms, 1s, 1m30s)");
  }
}
