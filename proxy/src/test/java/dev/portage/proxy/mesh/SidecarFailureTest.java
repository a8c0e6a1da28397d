package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.FailureAccrual;
import dev.portage.core.time.FakeClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The sidecar when endpoints fail, over real sockets with a real control plane: a refused endpoint is
 * taken out at once and reconnected in the background, a request whose connect failed goes to
 * another endpoint whatever its method, failing endpoints are penalised (p2c-ewma) or shut by
 * failure accrual, and gRPC answers are classified by their {@code grpc-status}. One event loop, so
 * each response's end is accounted before the next request is read.
 */
class SidecarFailureTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  final List<AutoCloseable> closeLater = new ArrayList<>();
  MeshFixture mesh;
  InetSocketAddress proxy;

  private void start(SidecarConfig.Builder config) throws IOException {
    mesh = new MeshFixture(clock.timeSource(), config.outboundPort(0).adminPort(0).ioThreads(1).build());
    proxy = mesh.sidecar.outboundAddress();
    mesh.service("web");
  }

  private static SidecarConfig.Builder config(SidecarConfig.BalancerKind balancer) {
    return SidecarConfig.builder("in-process:0").balancer(balancer);
  }

  @AfterEach
  void stop() throws Exception {
    if (mesh != null) {
      mesh.close();
    }
    for (AutoCloseable c : closeLater) {
      c.close();
    }
  }

  /** A port nothing listens on (bound once, then closed). */
  private static int deadPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private Endpoint<InetSocketAddress> endpoint(int port) {
    return mesh.sidecar.discovery().get(WEB).balancer.endpoints().stream()
        .filter(e -> e.target().getPort() == port).findFirst().orElseThrow();
  }

  @ParameterizedTest
  @EnumSource(SidecarConfig.BalancerKind.class)
  void aRequestWhoseConnectFailedGoesToAnotherEndpointWhateverItsMethod(SidecarConfig.BalancerKind kind)
      throws Exception {
    start(config(kind));
    int dead = deadPort();
    mesh.endpoint("web", "dead", dead);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 1);

    // The only endpoint refuses: the POST is never sent, it waits for a ready endpoint...
    CompletableFuture<RawHttp.Response> post = RawHttp.sendAsync(proxy, "POST", WEB, "/order", "a body".getBytes(StandardCharsets.UTF_8));
    await().atMost(10, TimeUnit.SECONDS).until(() -> !endpoint(dead).isReachable());
    Backend live = mesh.backend("live");
    live.behaviour = ex -> Backend.reply(ex, 200, "got " + new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
    mesh.endpoints("web", live);

    // ...and goes to the endpoint that appears, body and all.
    RawHttp.Response r = post.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text()).isEqualTo("got a body");

    for (int i = 0; i < 20; i++) {
      assertThat(RawHttp.send(proxy, i % 2 == 0 ? "GET" : "DELETE", WEB, "/" + i).status()).isEqualTo(200);
    }
    assertThat(live.hits).hasValue(21);
    assertThat(endpoint(dead).isReady()).isFalse();
    assertThat(mesh.sidecar.discovery().get(WEB).reconnecting()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(SidecarConfig.BalancerKind.class)
  void aRefusedEndpointAmongOthersCostsNoRequestAndComesBackWhenItListensAgain(SidecarConfig.BalancerKind kind)
      throws Exception {
    start(config(kind));
    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    int dead = deadPort();
    mesh.endpoints("web", a, b);
    mesh.endpoint("web", "dead", dead);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 3);

    for (int i = 0; i < 30; i++) {
      String method = i % 3 == 0 ? "POST" : "GET";
      RawHttp.Response r = RawHttp.send(proxy, method, WEB, "/" + i, i % 3 == 0 ? new byte[] {1, 2} : null);
      assertThat(r.status()).as("request %d (%s)", i, method).isEqualTo(200);
    }
    assertThat(a.hits.get() + b.hits.get()).isEqualTo(30);
    if (kind == SidecarConfig.BalancerKind.ROUND_ROBIN) {
      // Round robin reaches the dead endpoint within its first turn; p2c-ewma may prefer the others.
      assertThat(endpoint(dead).isReachable()).isFalse();
    }
    if (!endpoint(dead).isReachable()) {
      // Reconnects in the background with Linkerd's backoff: 100 ms, then 200 ms ...
      MeshFixture.advanceWhenPending(clock, Duration.ofMillis(110));
      await().atMost(10, TimeUnit.SECONDS).until(() -> {
        Duration next = clock.nextDeadline();
        return next != null && next.compareTo(Duration.ofMillis(180)) > 0; // the second wait is pending
      });
      assertThat(endpoint(dead).isReachable()).isFalse();
      Backend revived = new Backend("revived", dead);
      closeLater.add(revived);
      clock.advance(Duration.ofMillis(220));
      await().atMost(10, TimeUnit.SECONDS).until(() -> endpoint(dead).isReachable());
      assertThat(mesh.sidecar.discovery().get(WEB).reconnecting()).isZero();
      if (kind == SidecarConfig.BalancerKind.ROUND_ROBIN) {
        for (int i = 0; i < 6; i++) {
          assertThat(RawHttp.send(proxy, "GET", WEB, "/back").status()).isEqualTo(200);
        }
        assertThat(revived.hits).hasValue(2);
      }
    }
  }

  @Test
  void withNoEndpointReachableRequestsWaitTheFailFastTimeoutThen503() throws Exception {
    start(config(SidecarConfig.BalancerKind.P2C_EWMA));
    int dead = deadPort();
    mesh.endpoint("web", "dead", dead);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 1);
    CompletableFuture<RawHttp.Response> waiting = RawHttp.sendAsync(proxy, "GET", WEB, "/", null);
    await().atMost(10, TimeUnit.SECONDS).until(() -> !endpoint(dead).isReachable());
    // Reconnects at 100, 300, 700, 1500 ms fail (the clock only moves as far as the next wait each time).
    for (long wait : new long[] {100, 200, 400, 800}) {
      long w = wait;
      await().atMost(10, TimeUnit.SECONDS).until(() -> {
        Duration next = clock.nextDeadline();
        return next != null && next.toMillis() <= w;
      });
      clock.advance(Duration.ofMillis(wait));
    }
    MeshFixture.advanceWhenPending(clock, Duration.ofMillis(1500)); // 3 s since the request: fail-fast
    RawHttp.Response r = waiting.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.text()).isEqualTo("service in fail-fast");
  }

  @Test
  void p2cEwmaCharges503sAsSlowSoAFailingEndpointGetsNoTraffic() throws Exception {
    start(config(SidecarConfig.BalancerKind.P2C_EWMA));
    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    Backend failing = mesh.backend("failing");
    failing.behaviour = ex -> Backend.reply(ex, 503, "overloaded");
    mesh.endpoints("web", a, b, failing);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 3);

    int unavailable = 0;
    for (int i = 0; i < 60; i++) {
      if (RawHttp.send(proxy, "GET", WEB, "/").status() == 503) {
        unavailable++;
      }
    }
    // Without the penalty a fast 503 would look like the cheapest endpoint and take the most.
    assertThat(failing.hits.get()).isLessThanOrEqualTo(1);
    assertThat(unavailable).isEqualTo(failing.hits.get());
  }

  @Test
  void failureAccrualShutsAnEndpointAfterConsecutiveFailuresAndProbesItAfterTheBackoff() throws Exception {
    start(config(SidecarConfig.BalancerKind.ROUND_ROBIN)
        .failureAccrual(new FailureAccrual.Settings(3, Duration.ofSeconds(1), Duration.ofSeconds(8), 0)));
    Backend ok = mesh.backend("ok");
    Backend failing = mesh.backend("failing");
    failing.behaviour = ex -> Backend.reply(ex, 503, "overloaded");
    mesh.endpoints("web", ok, failing);
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 2);

    int unavailable = 0;
    for (int i = 0; i < 40; i++) {
      if (RawHttp.send(proxy, "GET", WEB, "/").status() == 503) {
        unavailable++;
      }
    }
    assertThat(unavailable).as("three failures shut it").isEqualTo(3);
    assertThat(failing.hits).hasValue(3);

    clock.advance(Duration.ofSeconds(1)); // probation: one probe, which fails: shut for 2 s
    for (int i = 0; i < 10; i++) {
      RawHttp.send(proxy, "GET", WEB, "/");
    }
    assertThat(failing.hits).hasValue(4);

    failing.behaviour = ex -> Backend.reply(ex, 200, "recovered");
    clock.advance(Duration.ofSeconds(2)); // the next probe succeeds: open again
    for (int i = 0; i < 10; i++) {
      assertThat(RawHttp.send(proxy, "GET", WEB, "/").status()).isEqualTo(200);
    }
    assertThat(failing.hits.get()).isBetween(8, 10);
  }

  @Test
  void grpcStatusInTrailersOrInATrailersOnlyAnswerIsWhatFailureAccrualCounts() throws Exception {
    start(config(SidecarConfig.BalancerKind.ROUND_ROBIN)
        .failureAccrual(new FailureAccrual.Settings(2, Duration.ofSeconds(1), Duration.ofSeconds(8), 0)));
    ScriptedBackend ok = new ScriptedBackend(() -> ScriptedBackend.chunkedWithTrailers("ok", "grpc-status: 0"));
    ScriptedBackend unavailable = new ScriptedBackend(() -> ScriptedBackend.chunkedWithTrailers("", "grpc-status: 14"));
    closeLater.add(ok);
    closeLater.add(unavailable);
    mesh.endpoint("web", "ok", ok.port());
    mesh.endpoint("web", "unavailable", unavailable.port());
    await().atMost(10, TimeUnit.SECONDS).until(() -> mesh.sidecar.discovery().get(WEB).balancer.endpoints().size() == 2);

    for (int i = 0; i < 20; i++) {
      // Every answer is an HTTP 200: only the grpc-status in the trailers tells the failures.
      assertThat(RawHttp.send(proxy, "POST", WEB, "/pkg.Svc/Call", new byte[5], "content-type: application/grpc")
          .status()).isEqualTo(200);
    }
    assertThat(unavailable.requests).hasSize(2);
    assertThat(endpoint(unavailable.port()).isShut()).isTrue();

    // A trailers-only answer carries its status in the head.
    unavailable.response = () -> "HTTP/1.1 200 OK\r\ncontent-type: application/grpc\r\ngrpc-status: 13\r\ncontent-length: 0\r\n\r\n";
    clock.advance(Duration.ofSeconds(1));
    for (int i = 0; i < 10; i++) {
      RawHttp.send(proxy, "POST", WEB, "/pkg.Svc/Call", new byte[5], "content-type: application/grpc");
    }
    assertThat(unavailable.requests).as("the failed probe shut it again").hasSize(3);
    assertThat(endpoint(unavailable.port()).isShut()).isTrue();
    // A non-gRPC request to the same answers is an HTTP 200: a success.
    assertThat(ok.requests.size()).isGreaterThanOrEqualTo(27);
  }
}
