package dev.portage.hub.codec;

import java.math.BigDecimal;

/**
 * Go's {@code time.Duration} text form, as {@code meta/v1.Duration} appears in Kubernetes JSON:
 * {@code Duration.String()} ("1h2m3.5s", "1.5ms", "0s") and {@code time.ParseDuration} (a signed
 * sequence of decimal numbers with units ns, us, µs, ms, s, m, h). Stateless.
 */
final class GoDurations {

  private static final long MICRO = 1_000L;
  private static final long MILLI = 1_000_000L;
  private static final long SECOND = 1_000_000_000L;
  private static final long MINUTE = 60 * SECOND;
  private static final long HOUR = 60 * MINUTE;

  private GoDurations() {}

  /** {@code nanos} as Go prints a Duration. */
  static String format(long nanos) {
    if (nanos == 0) {
      return "0s";
    }
    boolean negative = nanos < 0;
    // Long.MIN_VALUE has no positive counterpart; BigDecimal keeps the arithmetic exact.
    BigDecimal u = BigDecimal.valueOf(nanos).abs();
    StringBuilder out = new StringBuilder();
    if (u.compareTo(BigDecimal.valueOf(SECOND)) < 0) {
      long n = u.longValue();
      if (n < MICRO) {
        out.append(n).append("ns");
      } else if (n < MILLI) {
        out.append(fraction(n, MICRO)).append("µs");
      } else {
        out.append(fraction(n, MILLI)).append("ms");
      }
    } else {
      BigDecimal[] hours = u.divideAndRemainder(BigDecimal.valueOf(HOUR));
      long rest = hours[1].longValue();
      long minutes = rest / MINUTE;
      long seconds = rest % MINUTE;
      if (hours[0].signum() > 0) {
        out.append(hours[0].toPlainString()).append('h').append(minutes).append('m');
      } else if (minutes > 0) {
        out.append(minutes).append('m');
      }
      out.append(fraction(seconds, SECOND)).append('s');
    }
    return negative ? "-" + out : out.toString();
  }

  /** {@code value / unit} with the fraction's trailing zeros (and a bare dot) dropped. */
  private static String fraction(long value, long unit) {
    return BigDecimal.valueOf(value).divide(BigDecimal.valueOf(unit)).stripTrailingZeros()
        .toPlainString();
  }

  /**
   * Parses a Go duration.
   *
   * @throws IllegalArgumentException if it is not one, or does not fit 64 bits of nanoseconds
   */
  static long parse(String text) {
    String s = text;
    if (s.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    boolean negative = false;
    if (s.charAt(0) == '-' || s.charAt(0) == '+') {
      negative = s.charAt(0) == '-';
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return 0;
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\"");
    }
    BigDecimal total = BigDecimal.ZERO;
    int i = 0;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      if (start == i) {
        throw new IllegalArgumentException("invalid duration \"" + text + "\"");
      }
      BigDecimal number;
      try {
        number = new BigDecimal(s.substring(start, i));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("invalid duration \"" + text + "\"");
      }
      int unitStart = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      long unit = switch (s.substring(unitStart, i)) {
        case "ns" -> 1;
        case "us", "µs", "μs" -> MICRO;
        case "ms" -> MILLI;
        case "s" -> SECOND;
        case "m" -> MINUTE;
        case "h" -> HOUR;
        default -> throw new IllegalArgumentException(
            "unknown unit in duration \"" + text + "\"");
      };
      total = total.add(number.multiply(BigDecimal.valueOf(unit)));
    }
    BigDecimal nanos = negative ? total.negate() : total;
    try {
      return nanos.setScale(0, java.math.RoundingMode.DOWN).longValueExact();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("invalid duration \"" + text + "\": out of range");
    }
  }
}
