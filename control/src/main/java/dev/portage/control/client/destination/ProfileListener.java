package dev.portage.control.client.destination;

import dev.portage.api.linkerd.destination.DestinationProfile;
import io.grpc.Status;

/**
 * Receives the service profiles of one {@link DestinationClient#watchProfile watch}. Calls never
 * overlap and come in order, on a gRPC thread or the client's scheduler; they must not block.
 */
public interface ProfileListener {

  /** The whole new profile; replaces the previous one. */
  void onProfile(DestinationProfile profile);

  /** The watch ended for good (INVALID_ARGUMENT or FAILED_PRECONDITION); see {@link EndpointListener#onError}. */
  default void onError(Status status) {}
}
