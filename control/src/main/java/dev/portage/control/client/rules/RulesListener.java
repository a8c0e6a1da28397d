package dev.portage.control.client.rules;

/**
 * Receives the full states a {@link RulesClient} gets. Called serially, never concurrently with
 * itself, on a gRPC or scheduler thread: keep it short and non-blocking. The state is acknowledged to
 * the control plane only after this returns normally; a thrown exception leaves it unacknowledged, so
 * the control plane eventually drops the stream and the client reconnects and receives it again.
 */
@FunctionalInterface
public interface RulesListener {

  void onUpdate(RuleUpdate update);
}
