package dev.portage.hub.codec;

import java.math.BigDecimal;

/**
 * Go's {@code time.Duration} text form, as {@code meta/v1.Duration} appears in Kubernetes JSON:
 * {@code Duration.String()} ("1h2m3.5s", "1.5ms", "0s"). Parsing is core's {@link
 * dev.portage.core.time.GoDurations}. Stateless.
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
}
