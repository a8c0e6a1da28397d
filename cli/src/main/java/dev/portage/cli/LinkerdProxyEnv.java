package dev.portage.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * linkerd2-proxy's {@code LINKERD2_PROXY_*} environment variables, read as defaults for {@code
 * portage sidecar}'s flags, so a pod spec written for Linkerd's proxy configures ours: the
 * destination address (and name), outbound and admin listen addresses, log level and format, connect
 * timeout and backoff, fail-fast timeout. Values use Linkerd's syntax (durations {@code 100ms},
 * {@code 3s}, {@code 1m}, {@code 1d}, bare {@code 0}; addresses {@code host:port}); a malformed one is
 * an error naming the variable. Every other {@code LINKERD2_PROXY_*} variable is {@linkplain
 * #withoutEffect() listed} so the command can say it has no effect.
 */
final class LinkerdProxyEnv {

  static final String PREFIX = "LINKERD2_PROXY_";

  static final String DESTINATION_SVC_ADDR = PREFIX + "DESTINATION_SVC_ADDR";
  static final String DESTINATION_SVC_NAME = PREFIX + "DESTINATION_SVC_NAME";
  static final String OUTBOUND_LISTEN_ADDR = PREFIX + "OUTBOUND_LISTEN_ADDR";
  static final String OUTBOUND_LISTEN_ADDRS = PREFIX + "OUTBOUND_LISTEN_ADDRS";
  static final String ADMIN_LISTEN_ADDR = PREFIX + "ADMIN_LISTEN_ADDR";
  static final String LOG = PREFIX + "LOG";
  static final String LOG_FORMAT = PREFIX + "LOG_FORMAT";
  static final String CONNECT_TIMEOUT = PREFIX + "OUTBOUND_CONNECT_TIMEOUT";
  static final String BACKOFF_MIN = PREFIX + "OUTBOUND_CONNECT_EXP_BACKOFF_MIN";
  static final String BACKOFF_MAX = PREFIX + "OUTBOUND_CONNECT_EXP_BACKOFF_MAX";
  static final String BACKOFF_JITTER = PREFIX + "OUTBOUND_CONNECT_EXP_BACKOFF_JITTER";
  static final String FAILFAST_TIMEOUT = PREFIX + "OUTBOUND_HTTP_FAILFAST_TIMEOUT";

  /** The variables that take effect. */
  static final Set<String> IMPLEMENTED = Set.of(
      DESTINATION_SVC_ADDR, DESTINATION_SVC_NAME, OUTBOUND_LISTEN_ADDR, OUTBOUND_LISTEN_ADDRS,
      ADMIN_LISTEN_ADDR, LOG, LOG_FORMAT, CONNECT_TIMEOUT, BACKOFF_MIN, BACKOFF_MAX, BACKOFF_JITTER,
      FAILFAST_TIMEOUT);

  /** Where Portage's own code logs: Linkerd's {@code linkerd=<level>} directive sets this logger. */
  static final String OWN_LOGGER = "dev.portage";

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private final Map<String, String> env;

  /** @param env the process environment (only {@code LINKERD2_PROXY_*} entries are read) */
  LinkerdProxyEnv(Map<String, String> env) {
    Map<String, String> ours = new TreeMap<>();
    env.forEach((k, v) -> {
      if (k.startsWith(PREFIX) && v != null) {
        ours.put(k, v.trim());
      }
    });
    this.env = ours;
  }

  /** The value of {@code name}, or null when unset or empty. */
  String get(String name) {
    String v = env.get(name);
    return v == null || v.isEmpty() ? null : v;
  }

  /** {@code LINKERD2_PROXY_*} variables set that Portage does not implement, sorted. */
  List<String> withoutEffect() {
    List<String> out = new ArrayList<>();
    for (String k : env.keySet()) {
      if (!IMPLEMENTED.contains(k)) {
        out.add(k);
      }
    }
    return out;
  }

  /**
   * The outbound listener: {@code OUTBOUND_LISTEN_ADDRS} (its first address) wins over {@code
   * OUTBOUND_LISTEN_ADDR}, as in Linkerd; null when neither is set.
   */
  ListenAddress outbound() {
    String many = get(OUTBOUND_LISTEN_ADDRS);
    if (many != null) {
      return ListenAddress.parse(OUTBOUND_LISTEN_ADDRS, many.split(",")[0].trim(), null, 0);
    }
    return address(OUTBOUND_LISTEN_ADDR);
  }

  /** A listen address variable, or null when unset. */
  ListenAddress address(String name) {
    String v = get(name);
    return v == null ? null : ListenAddress.parse(name, v, null, 0);
  }

  /** A duration variable in Linkerd's syntax, or null when unset. */
  Duration duration(String name) {
    String v = get(name);
    if (v == null) {
      return null;
    }
    if (v.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = DURATION.matcher(v);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          name + "=" + v + " (expected: an integer with ms, s, m, h or d, e.g. 100ms or 3s)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /** A number variable, or null when unset. */
  Double number(String name) {
    String v = get(name);
    if (v == null) {
      return null;
    }
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + "=" + v + " (expected: a number, e.g. 0.1)");
    }
  }

  /**
   * {@code LOG} and {@code LOG_FORMAT} as log defaults. {@code LOG} is a tracing filter, {@code
   * warn,linkerd=info,hickory=error}: its bare level sets the root logger, a {@code linkerd}
   * directive (or one of its modules, {@code linkerd_app=debug}) sets Portage's own loggers, other
   * targets name Rust crates and are ignored. {@code LOG_FORMAT} is {@code PLAIN} or {@code JSON}.
   */
  LogDefaults logDefaults() {
    LoggingOptions.LogLevel root = null;
    Map<String, LoggingOptions.LogLevel> loggers = new LinkedHashMap<>();
    String filter = get(LOG);
    if (filter != null) {
      for (String part : filter.split(",")) {
        String directive = part.trim();
        if (directive.isEmpty()) {
          continue;
        }
        int eq = directive.indexOf('=');
        if (eq < 0) {
          root = level(directive, filter);
          continue;
        }
        String target = directive.substring(0, eq).trim();
        LoggingOptions.LogLevel l = level(directive.substring(eq + 1), filter);
        if (target.equals("linkerd") || target.startsWith("linkerd_") || target.startsWith("linkerd2")
            || target.startsWith("linkerd::")) {
          loggers.put(OWN_LOGGER, l);
        }
      }
    }
    LoggingOptions.Format format = null;
    String f = get(LOG_FORMAT);
    if (f != null) {
      format = switch (f.toLowerCase(Locale.ROOT)) {
        case "plain" -> LoggingOptions.Format.plain;
        case "json" -> LoggingOptions.Format.json;
        default -> throw new IllegalArgumentException(LOG_FORMAT + "=" + f + " (expected: PLAIN or JSON)");
      };
    }
    return new LogDefaults(root, loggers, format);
  }

  private static LoggingOptions.LogLevel level(String value, String filter) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "trace" -> LoggingOptions.LogLevel.TRACE;
      case "debug" -> LoggingOptions.LogLevel.DEBUG;
      case "info" -> LoggingOptions.LogLevel.INFO;
      case "warn" -> LoggingOptions.LogLevel.WARN;
      case "error", "off" -> LoggingOptions.LogLevel.ERROR;
      default -> throw new IllegalArgumentException(
          LOG + "=" + filter + ": '" + value.trim() + "' (expected: trace, debug, info, warn, error or off)");
    };
  }
}
