package dev.portage.core.admin;

import java.util.Objects;

/**
 * One named condition behind {@code /healthz}, {@code /livez} or {@code /readyz}. Checks run on the
 * admin server's event loop for every probe, so they must be fast and must not block: report a
 * state the component already keeps rather than doing I/O. A check that throws counts as failed.
 */
@FunctionalInterface
public interface HealthCheck {

  /** The current state of this condition. */
  Result check();

  /**
   * The outcome of one check.
   *
   * @param healthy whether the condition holds
   * @param reason why it does not hold; empty when healthy
   */
  record Result(boolean healthy, String reason) {

    private static final Result OK = new Result(true, "");

    public Result {
      Objects.requireNonNull(reason, "reason");
    }

    /** The condition holds. */
    public static Result ok() {
      return OK;
    }

    /** The condition does not hold, for the given human-readable reason. */
    public static Result failed(String reason) {
      return new Result(false, reason);
    }
  }
}
