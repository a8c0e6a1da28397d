package dev.portage.control.client.destination;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.linkerd.destination.DestinationProfile;
import io.grpc.Status;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** Records listener calls; waits (bounded) for the ones that cross threads. */
final class QueueListener implements EndpointListener, ProfileListener {

  final LinkedBlockingQueue<EndpointSet> sets = new LinkedBlockingQueue<>();
  final LinkedBlockingQueue<DestinationProfile> profiles = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> error = new CompletableFuture<>();

  @Override
  public void onEndpoints(EndpointSet endpoints) {
    sets.add(endpoints);
  }

  @Override
  public void onProfile(DestinationProfile profile) {
    profiles.add(profile);
  }

  @Override
  public void onError(Status status) {
    error.complete(status);
  }

  EndpointSet nextSet() {
    return take(sets);
  }

  DestinationProfile nextProfile() {
    return take(profiles);
  }

  Status awaitError() {
    try {
      return error.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("no terminal error within 10 s", e);
    }
  }

  /** "ip:port" of each endpoint, sorted. */
  static Set<String> addresses(EndpointSet s) {
    return s.endpoints().keySet().stream()
        .map(a -> a.getAddress().getHostAddress() + ":" + a.getPort())
        .collect(Collectors.toCollection(java.util.TreeSet::new));
  }

  private static <T> T take(LinkedBlockingQueue<T> q) {
    try {
      T t = q.poll(10, TimeUnit.SECONDS);
      assertThat(t).as("a listener call within 10 s").isNotNull();
      return t;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }
}
