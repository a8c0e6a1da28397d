package dev.portage.control.rules;

/**
 * How one dds type stands on the rule server at one moment (for status pages). Immutable.
 *
 * @param type the dds type, e.g. {@code TagRoute}
 * @param revision kind revision of the type's latest state (the store's, before any client asked)
 * @param objects objects in that state
 * @param subscribers connections subscribed to the type
 * @param unacknowledged pushes sent or queued whose ACK has not arrived
 * @param pushes full-state pushes sent since the server started
 */
public record RuleTypeStatus(
    String type, long revision, int objects, long subscribers, long unacknowledged, long pushes) {}
