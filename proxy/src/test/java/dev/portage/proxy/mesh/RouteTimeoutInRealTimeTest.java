package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.time.TimeSource;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A route's timeout on the real clock, as production runs it: the timer is the request's event
 * loop's, not the shared scheduler's, and still answers 504 (the fake-clock twin is in {@link
 * SidecarIntegrationTest}).
 */
class RouteTimeoutInRealTimeTest {

  static final String WEB = authority("web");

  final ScheduledExecutorService timer = TimeSource.newTimer("route-timeout-test-timer");
  MeshFixture mesh;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(TimeSource.system(timer), SidecarConfig.BalancerKind.P2C_EWMA);
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
}
