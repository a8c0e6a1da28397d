package dev.portage.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.rolling.FixedWindowRollingPolicy;
import ch.qos.logback.core.rolling.RollingFileAppender;
import ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy;
import ch.qos.logback.core.util.FileSize;
import dev.portage.cli.flags.LogSettings;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Locale;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** Global logging flags, inherited by every subcommand and applied before the command runs. */
final class LoggingOptions {

  /** The appender klog's {@code --log-file} adds. */
  private static final String FILE_APPENDER = "KLOG_FILE";

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

  /** How log lines are written to stderr; {@code plain} is Linkerd's name for {@code text}. */
  enum Format {
    text,
    json,
    plain
  }

  /**
   * A level in any case, with the names Linkerd's and logrus' {@code -log-level} also take: {@code
   * warning} is WARN, {@code fatal} and {@code panic} are ERROR (Portage logs nothing above it).
   */
  static final class LevelConverter implements CommandLine.ITypeConverter<LogLevel> {
    @Override
    public LogLevel convert(String value) {
      String v = value.trim().toUpperCase(Locale.ROOT);
      return switch (v) {
        case "WARNING" -> LogLevel.WARN;
        case "FATAL", "PANIC" -> LogLevel.ERROR;
        default -> {
          try {
            yield LogLevel.valueOf(v);
          } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(
                "'" + value + "' (expected: TRACE, DEBUG, INFO, WARN or ERROR in any case; FATAL and PANIC mean ERROR)");
          }
        }
      };
    }
  }

  @Option(
      names = "--log-level",
      scope = ScopeType.INHERIT,
      paramLabel = "LEVEL",
      converter = LevelConverter.class,
      description = "Root log level: ${COMPLETION-CANDIDATES}, any case (default: INFO, or what klog's -v asks for).")
  LogLevel level;

  @Option(
      names = "--log-format",
      scope = ScopeType.INHERIT,
      paramLabel = "FORMAT",
      description = "Log line format on stderr: ${COMPLETION-CANDIDATES} (plain = text; default: text).")
  Format format;

  /** Loggers whose level the environment set last time, reset by the next {@link #apply}. */
  private static final java.util.Set<String> envLoggers = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * Reconfigures logback's root level, stderr encoder and threshold, and the log file, from these
   * flags and the command's klog flags ({@code --log-level} wins over {@code -v}).
   */
  void apply(LogSettings klog) {
    apply(klog, LogDefaults.NONE);
  }

  /**
   * As {@link #apply(LogSettings)}, with the command's environment filling in what neither these
   * flags nor klog's give: the root level and named loggers' levels, and the format.
   */
  void apply(LogSettings klog, LogDefaults env) {
    boolean fromEnv = level == null && klog.level() == null && env.root() != null;
    Level parsed = level != null ? Level.toLevel(level.name())
        : klog.level() != null ? Level.toLevel(klog.level().name())
        : env.root() != null ? Level.toLevel(env.root().name()) : Level.INFO;
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return; // another SLF4J backend (tests may bring one): leave it alone
    }
    for (String name : envLoggers) {
      context.getLogger(name).setLevel(null);
    }
    envLoggers.clear();
    if (fromEnv) {
      env.loggers().forEach((name, l) -> {
        context.getLogger(name).setLevel(Level.toLevel(l.name()));
        envLoggers.add(name);
      });
    }
    if (!SLF4JBridgeHandler.isInstalled()) {
      // grpc-java and the JDK log through java.util.logging; without this their lines bypass the
      // chosen format (a raw multi-line WARNING in the middle of JSON logs).
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(parsed);
    boolean wantJson = (format != null ? format : env.format()) == Format.json;
    if (root.getAppender("STDERR") instanceof ConsoleAppender<ILoggingEvent> console) {
      console.stop();
      if (wantJson != console.getEncoder() instanceof JsonEncoder) {
        console.setEncoder(wantJson ? jsonEncoder(context) : textEncoder(context));
      }
      console.clearAllFilters();
      if (klog.stderrThreshold() != null) {
        ThresholdFilter threshold = new ThresholdFilter();
        threshold.setLevel(klog.stderrThreshold().name());
        threshold.start();
        console.addFilter(threshold);
      }
      console.start();
    }
    Appender<ILoggingEvent> previous = root.getAppender(FILE_APPENDER);
    if (previous != null) {
      root.detachAppender(previous);
      previous.stop();
    }
    if (klog.file() != null) {
      root.addAppender(fileAppender(context, klog, wantJson ? jsonEncoder(context) : textEncoder(context)));
    }
  }

  /**
   * The appender of klog's {@code --log-file}: appends, and with a size limit starts the file over
   * once it is reached, keeping the previous one as {@code <file>.1} (klog keeps none).
   */
  private static Appender<ILoggingEvent> fileAppender(LoggerContext context, LogSettings klog,
      Encoder<ILoggingEvent> encoder) {
    String path = klog.file().toString();
    FileAppender<ILoggingEvent> file = klog.fileMaxBytes() == 0 ? new FileAppender<>() : new RollingFileAppender<>();
    file.setContext(context);
    file.setName(FILE_APPENDER);
    file.setFile(path);
    file.setAppend(true);
    file.setEncoder(encoder);
    if (file instanceof RollingFileAppender<ILoggingEvent> rollingFile) {
      FixedWindowRollingPolicy rolling = new FixedWindowRollingPolicy();
      rolling.setContext(context);
      rolling.setParent(rollingFile);
      rolling.setFileNamePattern(path + ".%i");
      rolling.setMinIndex(1);
      rolling.setMaxIndex(1);
      SizeBasedTriggeringPolicy<ILoggingEvent> trigger = new SizeBasedTriggeringPolicy<>();
      trigger.setContext(context);
      trigger.setMaxFileSize(new FileSize(klog.fileMaxBytes()));
      rollingFile.setRollingPolicy(rolling);
      rollingFile.setTriggeringPolicy(trigger);
      rolling.start();
      trigger.start();
    }
    file.start();
    if (!file.isStarted()) {
      throw new IllegalArgumentException("--log-file: cannot write " + path);
    }
    return file;
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
