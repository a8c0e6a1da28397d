package dev.portage.core.health;

import dev.portage.core.balance.Endpoint;

/**
 * Told when a {@link HealthProber} changes an endpoint's health. Runs on the thread that delivered the
 * deciding probe result (the scheduler for timeouts), so it must not block.
 */
@FunctionalInterface
public interface HealthListener<T> {

  /** {@code endpoint} has just become healthy ({@code true}) or unhealthy ({@code false}). */
  void onHealthChanged(Endpoint<T> endpoint, boolean healthy);
}
