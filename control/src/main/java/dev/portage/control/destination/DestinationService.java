package dev.portage.control.destination;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The gRPC face of the {@link DestinationServer}: validates each request at the boundary (scheme,
 * authority) and hands valid ones to the server. Called on gRPC's executor.
 */
final class DestinationService extends DestinationGrpc.DestinationImplBase {

  private final DestinationServer server;
  private final String clusterDomain;

  DestinationService(DestinationServer server, String clusterDomain) {
    this.server = server;
    this.clusterDomain = clusterDomain;
  }

  @Override
  public void get(GetDestination request, StreamObserver<Update> responseObserver) {
    Authority a = parse(request, responseObserver);
    if (a != null) {
      server.openEndpoints(
          a, ContextToken.parse(request.getContextToken()), (ServerCallStreamObserver<Update>) responseObserver);
    }
  }

  @Override
  public void getProfile(GetDestination request, StreamObserver<DestinationProfile> responseObserver) {
    Authority a = parse(request, responseObserver);
    if (a != null) {
      server.openProfile(
          a,
          ContextToken.parse(request.getContextToken()),
          (ServerCallStreamObserver<DestinationProfile>) responseObserver);
    }
  }

  private Authority parse(GetDestination request, StreamObserver<?> call) {
    String scheme = request.getScheme();
    if (!scheme.isEmpty() && !scheme.equals("k8s")) {
      call.onError(
          Status.INVALID_ARGUMENT.withDescription("scheme: " + scheme + " (expected: k8s)").asRuntimeException());
      return null;
    }
    try {
      return Authority.parse(request.getPath(), clusterDomain);
    } catch (IllegalArgumentException e) {
      call.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
      return null;
    }
  }
}
