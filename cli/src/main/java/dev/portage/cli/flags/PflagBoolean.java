package dev.portage.cli.flags;

import java.util.Set;
import picocli.CommandLine;

/**
 * Boolean flag values in the spellings Go's {@code strconv.ParseBool} accepts ({@code 1 t T TRUE true
 * True} and {@code 0 f F FALSE false False}), which is what pflag and Go's {@code flag} package take:
 * a manifest written {@code --enable-foo=1} must not be refused.
 */
public final class PflagBoolean implements CommandLine.ITypeConverter<Boolean> {

  private static final Set<String> TRUE = Set.of("1", "t", "T", "TRUE", "true", "True");
  private static final Set<String> FALSE = Set.of("0", "f", "F", "FALSE", "false", "False");

  /** The value Go would parse, or null when Go would refuse it. */
  public static Boolean parse(String value) {
    if (TRUE.contains(value)) {
      return Boolean.TRUE;
    }
    return FALSE.contains(value) ? Boolean.FALSE : null;
  }

  @Override
  public Boolean convert(String value) {
    Boolean parsed = parse(value);
    if (parsed == null) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a boolean (expected: true or false; 1 t T TRUE True, 0 f F FALSE False)");
    }
    return parsed;
  }
}
