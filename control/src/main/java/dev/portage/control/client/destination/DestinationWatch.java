package dev.portage.control.client.destination;

/** A live watch of one destination; closing it cancels its stream and any pending reconnect. */
public interface DestinationWatch extends AutoCloseable {

  /** The authority watched, {@code host:port}. */
  String authority();

  /** Idempotent; no listener call starts after it returns, unless one is already running. */
  @Override
  void close();
}
