package dev.portage.control.destination;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Kubernetes resource quantities as ServiceProfile {@code dstOverrides[].weight} carries them ({@code
 * "500m"}, {@code "1"}, {@code 1}, {@code "2k"}, {@code "1Ki"}), read as milli-units like Linkerd's
 * {@code Quantity.MilliValue()}: {@code "1"} is 1000 and {@code "500m"} is 500, so both spellings of a
 * split keep their ratio.
 */
final class Quantity {

  private Quantity() {}

  /**
   * The milli-value, capped at {@code 0xFFFFFFFF} (the wire's uint32).
   *
   * @throws IllegalArgumentException for a negative or malformed quantity
   */
  static long milliValue(JsonNode node) {
    String text;
    if (node == null || node.isMissingNode() || node.isNull()) {
      throw new IllegalArgumentException("weight: missing (expected: a quantity like 1, 500m)");
    }
    if (node.isNumber()) {
      text = node.decimalValue().toPlainString();
    } else if (node.isTextual()) {
      text = node.asText().trim();
    } else {
      throw new IllegalArgumentException("weight: " + node + " (expected: a quantity like 1, 500m)");
    }
    return milliValue(text);
  }

  static long milliValue(String text) {
    int end = text.length();
    while (end > 0 && Character.isLetter(text.charAt(end - 1))) {
      end--;
    }
    String suffix = text.substring(end);
    BigDecimal multiplier =
        switch (suffix) {
          case "" -> BigDecimal.ONE;
          case "n" -> new BigDecimal("1e-9");
          case "u" -> new BigDecimal("1e-6");
          case "m" -> new BigDecimal("1e-3");
          case "k" -> new BigDecimal("1e3");
          case "M" -> new BigDecimal("1e6");
          case "G" -> new BigDecimal("1e9");
          case "T" -> new BigDecimal("1e12");
          case "P" -> new BigDecimal("1e15");
          case "E" -> new BigDecimal("1e18");
          case "Ki" -> BigDecimal.valueOf(1L << 10);
          case "Mi" -> BigDecimal.valueOf(1L << 20);
          case "Gi" -> BigDecimal.valueOf(1L << 30);
          case "Ti" -> BigDecimal.valueOf(1L << 40);
          case "Pi" -> BigDecimal.valueOf(1L << 50);
          case "Ei" -> BigDecimal.valueOf(1L << 60);
          default -> throw bad(text);
        };
    BigDecimal number;
    try {
      number = new BigDecimal(text.substring(0, end));
    } catch (NumberFormatException e) {
      throw bad(text);
    }
    if (number.signum() < 0) {
      throw new IllegalArgumentException("weight: " + text + " (expected: >= 0)");
    }
    // MilliValue rounds up, like Kubernetes' ScaledValue.
    BigDecimal milli = number.multiply(multiplier).movePointRight(3).setScale(0, RoundingMode.CEILING);
    return milli.min(BigDecimal.valueOf(0xFFFF_FFFFL)).longValueExact();
  }

  private static IllegalArgumentException bad(String text) {
    return new IllegalArgumentException("weight: \"" + text + "\" (expected: a quantity like 1, 500m, 2k)");
  }
}
