package dev.portage.control.rules;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the {@link RuleServer}.
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>debounceAfter</td><td>100 ms</td><td>quiet period after a change of a type before it is pushed</td></tr>
 *   <tr><td>debounceMax</td><td>1 s</td><td>a type that keeps changing is pushed at most this long after its first change</td></tr>
 *   <tr><td>ackTimeout</td><td>30 s</td><td>a push not acknowledged within this closes the connection</td></tr>
 *   <tr><td>queueLimit</td><td>64</td><td>responses one connection may have waiting for transport readiness</td></tr>
 *   <tr><td>requireAuth</td><td>false</td><td>refuse clients without a client certificate or bearer token</td></tr>
 *   <tr><td>rootNamespace</td><td>dubbo-system</td><td>policies here apply to every client</td></tr>
 * </table>
 */
public record RuleServerConfig(
    Duration debounceAfter,
    Duration debounceMax,
    Duration ackTimeout,
    int queueLimit,
    boolean requireAuth,
    String rootNamespace) {

  public static final Duration DEFAULT_DEBOUNCE_AFTER = Duration.ofMillis(100);
  public static final Duration DEFAULT_DEBOUNCE_MAX = Duration.ofSeconds(1);
  public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(30);
  public static final int DEFAULT_QUEUE_LIMIT = 64;
  public static final String DEFAULT_ROOT_NAMESPACE = "dubbo-system";

  public RuleServerConfig {
    Objects.requireNonNull(debounceAfter, "debounceAfter");
    Objects.requireNonNull(debounceMax, "debounceMax");
    Objects.requireNonNull(ackTimeout, "ackTimeout");
    Objects.requireNonNull(rootNamespace, "rootNamespace");
    if (debounceAfter.isNegative()) {
      throw new IllegalArgumentException("debounceAfter: " + debounceAfter + " (expected: >= 0)");
    }
    if (debounceMax.compareTo(debounceAfter) < 0) {
      throw new IllegalArgumentException(
          "debounceMax: " + debounceMax + " (expected: >= debounceAfter " + debounceAfter + ")");
    }
    if (ackTimeout.isNegative() || ackTimeout.isZero()) {
      throw new IllegalArgumentException("ackTimeout: " + ackTimeout + " (expected: > 0)");
    }
    if (queueLimit < 1) {
      throw new IllegalArgumentException("queueLimit: " + queueLimit + " (expected: > 0)");
    }
    if (rootNamespace.isEmpty()) {
      throw new IllegalArgumentException("rootNamespace: empty (expected: a namespace name)");
    }
  }

  /** Every setting at its default. */
  public static RuleServerConfig defaults() {
    return new RuleServerConfig(
        DEFAULT_DEBOUNCE_AFTER, DEFAULT_DEBOUNCE_MAX, DEFAULT_ACK_TIMEOUT, DEFAULT_QUEUE_LIMIT, false,
        DEFAULT_ROOT_NAMESPACE);
  }

  public RuleServerConfig withDebounce(Duration after, Duration max) {
    return new RuleServerConfig(after, max, ackTimeout, queueLimit, requireAuth, rootNamespace);
  }

  public RuleServerConfig withAckTimeout(Duration timeout) {
    return new RuleServerConfig(debounceAfter, debounceMax, timeout, queueLimit, requireAuth, rootNamespace);
  }

  public RuleServerConfig withQueueLimit(int limit) {
    return new RuleServerConfig(debounceAfter, debounceMax, ackTimeout, limit, requireAuth, rootNamespace);
  }

  public RuleServerConfig withRequireAuth(boolean require) {
    return new RuleServerConfig(debounceAfter, debounceMax, ackTimeout, queueLimit, require, rootNamespace);
  }
}
