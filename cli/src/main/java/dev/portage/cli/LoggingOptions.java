package dev.portage.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** Global logging flags, inherited by every subcommand and applied before the command runs. */
final class LoggingOptions {

  /** Same pattern as the bundled logback.xml. */
  private static final String TEXT_PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n";

  /** Root log levels offered on the command line. */
  enum LogLevel {
    TRACE,
    DEBUG,
    INFO,
    WARN,
    ERROR
  }

  /** How log lines are written to stderr. */
  enum Format {
    text,
    json
  }

  @Option(
      names = "--log-level",
      scope = ScopeType.INHERIT,
      defaultValue = "INFO",
      paramLabel = "LEVEL",
      description = "Root log level: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  LogLevel level;

  @Option(
      names = "--log-format",
      scope = ScopeType.INHERIT,
      defaultValue = "text",
      paramLabel = "FORMAT",
      description = "Log line format on stderr: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  Format format;

  /** Reconfigures logback's root level and stderr encoder. */
  void apply() {
    Level parsed = Level.toLevel(level.name());
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return; // another SLF4J backend (tests may bring one): leave it alone
    }
    if (!SLF4JBridgeHandler.isInstalled()) {
      // grpc-java and the JDK log through java.util.logging; without this their lines bypass the
      // chosen format (a raw multi-line WARNING in the middle of JSON logs).
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(parsed);
    if (root.getAppender("STDERR") instanceof ConsoleAppender<ILoggingEvent> console) {
      boolean wantJson = format == Format.json;
      if (wantJson != console.getEncoder() instanceof JsonEncoder) {
        console.stop();
        console.setEncoder(wantJson ? jsonEncoder(context) : textEncoder(context));
        console.start();
      }
    }
  }

  private static Encoder<ILoggingEvent> textEncoder(LoggerContext context) {
    PatternLayoutEncoder text = new PatternLayoutEncoder();
    text.setContext(context);
    text.setPattern(TEXT_PATTERN);
    text.start();
    return text;
  }

  private static Encoder<ILoggingEvent> jsonEncoder(LoggerContext context) {
    JsonEncoder json = new JsonEncoder();
    json.setContext(context);
    json.setWithArguments(false);
    json.setWithSequenceNumber(false);
    json.setWithNanoseconds(false);
    json.start();
    return json;
  }
}
