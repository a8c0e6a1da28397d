package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sidecar's per-request timers on the real clock, as production runs them: a route's timeout
 * and the fail-fast wait are timers of the request's event loop, not of the shared scheduler, and
 * still answer 504 and 503 (the fake-clock twins are in {@link SidecarIntegrationTest}).
 */
class RealClockTimersTest {

  static final String WEB = authority("web");

  final ScheduledExecutorService timer = TimeSource.newTimer("route-timeout-test-timer");
  MeshFixture mesh;

  @BeforeEach
  void start() throws Exception {
    // A fail-fast wait long enough for every concurrent request below to be waiting when it ends.
    SidecarConfig config = SidecarConfig.defaults("in-process:0").withPorts(0, 0).toBuilder()
        .failfastTimeout(Duration.ofSeconds(2)).build();
    mesh = new MeshFixture(TimeSource.system(timer), config);
    mesh.service("web");
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
    timer.shutdownNow();
  }

  @Test
  void slowRouteAnswers504FromTheLoopsTimerAndFastOnesLeaveNoTimerBehind() throws Exception {
    Backend a = mesh.backend("a");
    mesh.endpoints("web", a);
    CountDownLatch release = new CountDownLatch(1);
    a.behaviour = ex -> {
      if (ex.getRequestURI().getPath().equals("/slow")) {
        release.await(20, TimeUnit.SECONDS);
      }
      Backend.reply(ex, 200, "done");
    };
    mesh.profile("web", """
        routes:
        - name: slow
          condition: {method: GET, pathRegex: /slow}
          timeout: 200ms
        - name: fast
          condition: {method: GET, pathRegex: /fast}
          timeout: 30s
        """);
    mesh.awaitProfileRoutes(WEB, 2);
    long scheduledBefore = ((ScheduledThreadPoolExecutor) timer).getTaskCount();

    for (int i = 0; i < 50; i++) {
      assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/fast").status()).isEqualTo(200);
    }
    RawHttp.Response r = RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/slow");
    release.countDown();

    assertThat(r.status()).isEqualTo(504);
    assertThat(r.text()).isEqualTo("request timed out after 200 ms");
    // 51 timed requests; on the shared scheduler they would be 51 tasks more (its own periodic
    // work, such as discovery, may add a few).
    assertThat(((ScheduledThreadPoolExecutor) timer).getTaskCount()).isLessThan(scheduledBefore + 51);
  }

  @Test
  void requestsWaitingForAnEndpointFailFastFromTheirLoopsTimers() throws Exception {
    mesh.endpoints("web"); // the service exists, without endpoints
    mesh.sidecar.profiles().get(WEB).get(10, TimeUnit.SECONDS); // no wait for the profile below
    long scheduledBefore = ((ScheduledThreadPoolExecutor) timer).getTaskCount();

    // A thread each, so all 20 wait at once (the common pool may have one thread here).
    try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<RawHttp.Response>> waiting = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        waiting.add(clients.submit(() -> RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/")));
      }
      for (Future<RawHttp.Response> w : waiting) {
        RawHttp.Response r = w.get(10, TimeUnit.SECONDS);
        assertThat(r.status()).isEqualTo(503);
        assertThat(r.text()).isEqualTo("service in fail-fast");
      }
    }
    // 20 waits; on the shared scheduler they would be 20 tasks more.
    assertThat(((ScheduledThreadPoolExecutor) timer).getTaskCount()).isLessThan(scheduledBefore + 20);
  }
}
