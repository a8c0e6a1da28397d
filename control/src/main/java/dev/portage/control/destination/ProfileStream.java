package dev.portage.control.destination;

import dev.portage.api.linkerd.destination.DestinationProfile;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * One {@code GetProfile} stream. Each message is a whole profile, so only the latest unsent one is
 * kept: a slow client skips intermediate versions instead of queueing them. Confined to the
 * destination server's serial executor.
 */
final class ProfileStream extends DestinationStream<DestinationProfile> {

  private DestinationProfile latest;
  private DestinationProfile pending;

  ProfileStream(
      long id,
      Authority authority,
      ContextToken context,
      ServerCallStreamObserver<DestinationProfile> call,
      DestinationMetrics metrics,
      long openedAtNanos) {
    super(id, DestinationMetrics.GET_PROFILE, authority, context, call, metrics, openedAtNanos);
  }

  /** Makes {@code profile} the next message unless it equals the last one sent or pending. */
  void publish(DestinationProfile profile) {
    if (!profile.equals(latest)) {
      latest = profile;
      pending = profile;
    }
  }

  @Override
  DestinationProfile poll() {
    DestinationProfile p = pending;
    pending = null;
    return p;
  }
}
