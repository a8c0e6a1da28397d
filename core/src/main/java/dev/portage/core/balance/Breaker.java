package dev.portage.core.balance;

import dev.portage.core.backoff.Backoff;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The failure accrual state of one endpoint (see {@link FailureAccrual} for the rules). The state
 * lives here, under this object's lock; the endpoint's gate bits mirror it for pickers. The common
 * case, a success while open with no failures counted, takes no lock.
 */
final class Breaker {

  private enum State { OPEN, SHUT, PROBATION, PROBING }

  private final FailureAccrual owner;
  private final Endpoint<?> endpoint;
  private final int maxFailures;
  private final Backoff backoff; // guarded by this
  private State state = State.OPEN; // guarded by this
  private volatile int failures; // consecutive, while open; written under the lock
  private ScheduledFuture<?> timer; // guarded by this

  Breaker(FailureAccrual owner, Endpoint<?> endpoint, int maxFailures, Backoff backoff) {
    this.owner = owner;
    this.endpoint = endpoint;
    this.maxFailures = maxFailures;
    this.backoff = backoff;
  }

  /** A pick's result; {@code probe} when the pick took the endpoint's probation probe. */
  void onResult(boolean success, boolean probe) {
    if (success && !probe && failures == 0) {
      return;
    }
    boolean nowReady = false;
    synchronized (this) {
      switch (state) {
        case OPEN -> {
          if (success) {
            failures = 0;
          } else if (++failures >= maxFailures) {
            shut();
          }
        }
        case PROBING -> {
          if (probe) {
            if (success) {
              state = State.OPEN;
              failures = 0;
              backoff.reset();
              endpoint.setAccrualState(false, false);
              nowReady = true;
            } else {
              shut();
            }
          }
        }
        case SHUT, PROBATION -> {
          // Late results of requests sent before the endpoint was shut say nothing new.
        }
      }
    }
    if (nowReady) {
      owner.ready(endpoint);
    }
  }

  /** A probe that ended without a result: the endpoint waits in probation for the next one. */
  void onProbeAbandoned() {
    synchronized (this) {
      if (state != State.PROBING) {
        return;
      }
      state = State.PROBATION;
      endpoint.setAccrualState(false, true);
    }
    owner.ready(endpoint);
  }

  /** Called by the pick that claimed the probe (the endpoint's gate already moved). */
  synchronized void probeClaimed() {
    if (state == State.PROBATION) {
      state = State.PROBING;
    }
  }

  private void shut() { // holding the lock
    state = State.SHUT;
    failures = 0;
    endpoint.setAccrualState(true, false);
    if (owner.isClosed()) {
      return;
    }
    long delay = backoff.nextDelayNanos();
    owner.timerStarted(this);
    timer = owner.scheduler().schedule(this::probation, delay, TimeUnit.NANOSECONDS);
  }

  private void probation() {
    synchronized (this) {
      owner.timerEnded(this);
      timer = null;
      if (state != State.SHUT) {
        return;
      }
      state = State.PROBATION;
      endpoint.setAccrualState(false, true);
    }
    owner.ready(endpoint);
  }

  synchronized void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  @Override
  public synchronized String toString() {
    return "Breaker{" + endpoint.id() + " " + state + ", failures=" + failures + '}';
  }
}
