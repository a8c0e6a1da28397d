package dev.portage.control.rules;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;

/** Puts the call's {@link PeerInfo} in the gRPC {@link Context}; does no I/O. Stateless. */
final class PeerInfoInterceptor implements ServerInterceptor {

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<String> AUTHORIZATION_TYPE =
      Metadata.Key.of("authorization-type", Metadata.ASCII_STRING_MARSHALLER);

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    PeerInfo peer =
        new PeerInfo(
            headers.get(AUTHORIZATION),
            headers.get(AUTHORIZATION_TYPE),
            call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION),
            call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    return Contexts.interceptCall(Context.current().withValue(PeerInfo.KEY, peer), call, headers, next);
  }
}
