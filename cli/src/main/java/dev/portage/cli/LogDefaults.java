package dev.portage.cli;

import java.util.Map;

/**
 * Log settings a command takes from its environment, used where no flag gives them: Linkerd's proxy
 * reads {@code LINKERD2_PROXY_LOG} ({@code warn,linkerd=info}) and {@code LINKERD2_PROXY_LOG_FORMAT}.
 *
 * @param root root level, or null for none
 * @param loggers levels of named loggers (e.g. {@code dev.portage}), applied with {@code root}
 * @param format line format, or null for none
 */
record LogDefaults(LoggingOptions.LogLevel root, Map<String, LoggingOptions.LogLevel> loggers,
    LoggingOptions.Format format) {

  /** Nothing from the environment. */
  static final LogDefaults NONE = new LogDefaults(null, Map.of(), null);

  LogDefaults {
    loggers = Map.copyOf(loggers);
  }

  /** A command whose log settings may come from its environment. */
  interface Source {
    /** @throws IllegalArgumentException naming the variable when one is malformed */
    LogDefaults logDefaults();
  }
}
