package dev.portage.control.rules;

import io.grpc.Context;
import java.net.SocketAddress;
import javax.net.ssl.SSLSession;

/**
 * What the transport and headers say about the peer of one dds call, captured by {@link
 * PeerInfoInterceptor} for {@link PeerAuthenticator}. Null fields are absent.
 *
 * @param authorization the {@code authorization} header
 * @param authorizationType the {@code authorization-type} header
 */
record PeerInfo(String authorization, String authorizationType, SSLSession ssl, SocketAddress remote) {

  static final Context.Key<PeerInfo> KEY = Context.key("portage-dds-peer");

  static final PeerInfo NONE = new PeerInfo(null, null, null, null);
}
