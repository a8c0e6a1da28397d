package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.time.FakeClock;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class EndpointReconnectorTest {

  private final FakeClock clock = new FakeClock();
  private final Balancer<String> balancer = Balancer.roundRobin();
  private final List<Long> attemptsAtMillis = new ArrayList<>();
  private final List<String> reachable = new CopyOnWriteArrayList<>();
  private volatile boolean refuse = true;

  /** Linkerd's outbound reconnect backoff without jitter: 100 ms, 200 ms, 400 ms ... 60 s. */
  private final EndpointReconnector<String> reconnector = new EndpointReconnector<>(
      new BackoffPolicy(Duration.ofMillis(100), Duration.ofSeconds(60), 2.0, 0), clock.scheduler(),
      new Random(1), e -> {
        attemptsAtMillis.add(clock.nanoTime() / 1_000_000);
        return refuse
            ? CompletableFuture.failedFuture(new ConnectException("Connection refused"))
            : CompletableFuture.completedFuture(null);
      },
      e -> balancer.endpoints().contains(e), e -> reachable.add(e.id()));

  @Test
  void aFailedConnectMakesTheEndpointUnreachableUntilABackgroundConnectSucceeds() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    Endpoint<String> b = Endpoint.of("b", "b:80");
    balancer.update(List.of(a, b));

    reconnector.connectFailed(a, new ConnectException("Connection refused"));
    assertThat(a.isReachable()).isFalse();
    assertThat(reconnector.reconnecting()).isEqualTo(1);
    for (int i = 0; i < 10; i++) {
      Pick<String> p = balancer.pick();
      assertThat(p.endpoint()).isSameAs(b);
      p.complete(1);
    }

    clock.advance(Duration.ofMillis(100 + 200 + 400 + 800));
    assertThat(attemptsAtMillis).containsExactly(100L, 300L, 700L, 1500L);
    assertThat(a.isReachable()).isFalse();

    refuse = false;
    clock.advance(Duration.ofMillis(1600));
    assertThat(attemptsAtMillis).containsExactly(100L, 300L, 700L, 1500L, 3100L);
    assertThat(a.isReachable()).isTrue();
    assertThat(reachable).containsExactly("a");
    assertThat(reconnector.reconnecting()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aSecondFailureWhileReconnectingStartsNoSecondLoop() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    balancer.update(List.of(a));
    reconnector.connectFailed(a, null);
    reconnector.connectFailed(a, null);
    clock.advance(Duration.ofMillis(100));
    assertThat(attemptsAtMillis).containsExactly(100L);
    assertThat(clock.pendingTasks()).isEqualTo(1);
  }

  @Test
  void theBackoffStartsOverInTheNextEpisode() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    balancer.update(List.of(a));
    reconnector.connectFailed(a, null);
    clock.advance(Duration.ofMillis(300)); // attempts at 100 and 300 refused
    refuse = false;
    clock.advance(Duration.ofMillis(400)); // 700: connected
    assertThat(a.isReachable()).isTrue();
    refuse = true;
    attemptsAtMillis.clear();
    reconnector.connectFailed(a, null);
    clock.advance(Duration.ofMillis(100));
    assertThat(attemptsAtMillis).containsExactly(800L);
  }

  @Test
  void aRemovedEndpointStopsBeingReconnected() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    Endpoint<String> b = Endpoint.of("b", "b:80");
    balancer.update(List.of(a, b));
    reconnector.connectFailed(a, null);
    balancer.update(List.of(b));
    clock.advance(Duration.ofSeconds(10));
    assertThat(attemptsAtMillis).isEmpty();
    assertThat(reconnector.reconnecting()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void closeStopsEveryLoop() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    balancer.update(List.of(a));
    reconnector.connectFailed(a, null);
    reconnector.close();
    assertThat(reconnector.reconnecting()).isZero();
    assertThat(clock.pendingTasks()).isZero();
    reconnector.connectFailed(a, null);
    assertThat(reconnector.reconnecting()).isZero();
  }

  @Test
  void nothingIsLeftAfterAThousandEpisodes() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    balancer.update(List.of(a));
    refuse = false;
    for (int i = 0; i < 1_000; i++) {
      reconnector.connectFailed(a, null);
      clock.advance(Duration.ofMillis(100));
      assertThat(a.isReachable()).isTrue();
    }
    assertThat(reconnector.reconnecting()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aConnectorThatThrowsCountsAsAFailedAttempt() {
    Endpoint<String> a = Endpoint.of("a", "a:80");
    balancer.update(List.of(a));
    EndpointReconnector<String> throwing = new EndpointReconnector<>(
        new BackoffPolicy(Duration.ofMillis(100), Duration.ofSeconds(60), 2.0, 0), clock.scheduler(),
        new Random(1), e -> {
          throw new IllegalStateException("pool closed");
        }, e -> true, e -> { });
    throwing.connectFailed(a, null);
    clock.advance(Duration.ofMillis(300));
    assertThat(throwing.reconnecting()).isEqualTo(1);
    assertThat(clock.pendingTasks()).isEqualTo(1);
    throwing.close();
  }
}
