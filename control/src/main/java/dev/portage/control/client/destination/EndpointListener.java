package dev.portage.control.client.destination;

import io.grpc.Status;

/**
 * Receives the endpoint sets of one {@link DestinationClient#watchEndpoints watch}. Calls never overlap
 * and come in order, on a gRPC thread or the client's scheduler; they must not block.
 */
public interface EndpointListener {

  /** The whole new set; replaces the previous one. */
  void onEndpoints(EndpointSet endpoints);

  /**
   * The watch ended for good: the control plane answered INVALID_ARGUMENT or FAILED_PRECONDITION, so
   * retrying cannot help. Other failures are retried silently and the last set stays valid.
   */
  default void onError(Status status) {}
}
