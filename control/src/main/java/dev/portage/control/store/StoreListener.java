package dev.portage.control.store;

/**
 * Receives the changes of a {@link ResourceStore#watch watch}, in revision order, on the watch's
 * executor (never concurrently with itself).
 */
public interface StoreListener {

  /** One change the watcher had not seen. */
  void onEvent(StoreEvent event);

  /**
   * The watcher fell behind (its queue overflowed, or it asked to resume from a revision the store no
   * longer has history for): events were dropped, so it must re-list what it cares about. Events
   * after {@code revision} follow.
   */
  void onResync(long revision);
}
