package dev.portage.control.client.destination;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.core.backoff.Backoff;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

/**
 * A {@code GetProfile} watch: every message is a whole profile; one equal to the last delivered is not
 * delivered again (a reconnect usually repeats it). Confined to the client's synchronization context.
 */
final class ProfileWatch extends ReconnectingStream<DestinationProfile> {

  private final ProfileListener listener;
  private DestinationProfile delivered;

  ProfileWatch(
      Channel channel,
      GetDestination request,
      SynchronizationContext sync,
      ScheduledExecutorService scheduler,
      Backoff backoff,
      Consumer<ReconnectingStream<?>> onClosed,
      ProfileListener listener) {
    super(channel, DestinationGrpc.getGetProfileMethod(), request, sync, scheduler, backoff, onClosed);
    this.listener = listener;
  }

  @Override
  void onStreamStarted() {}

  @Override
  void onMessage(DestinationProfile profile) {
    if (!profile.equals(delivered) && !isClosed()) {
      delivered = profile;
      listener.onProfile(profile);
    }
  }

  @Override
  void onTerminalError(Status status) {
    listener.onError(status);
  }
}
