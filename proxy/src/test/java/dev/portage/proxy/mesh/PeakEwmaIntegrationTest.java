package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * P2C over peak-EWMA through the real sidecar: a slow endpoint is avoided once its latency is known.
 * The slow backend moves the sidecar's fake clock by 150 ms while it holds each request, so the
 * measured RTTs are exact whatever the machine's load (on real time a loaded machine's hiccups made
 * fast endpoints look as slow as the slow one).
 */
class PeakEwmaIntegrationTest {

  final FakeClock clock = new FakeClock();
  MeshFixture mesh;

  @AfterEach
  void stop() throws Exception {
    mesh.close();
  }

  @Test
  void slowEndpointGetsFewRequests() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    Backend fast1 = mesh.backend("fast1");
    Backend fast2 = mesh.backend("fast2");
    Backend slow = mesh.backend("slow");
    slow.behaviour = ex -> {
      clock.advance(Duration.ofMillis(150));
      Backend.reply(ex, 200, "slow");
    };
    mesh.service("web");
    mesh.endpoints("web", fast1, fast2, slow);
    await().atMost(10, TimeUnit.SECONDS).until(() ->
        mesh.sidecar.discovery().get(authority("web")).balancer.endpoints().size() == 3);

    int n = 60;
    for (int i = 0; i < n; i++) {
      assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", authority("web"), "/").status()).isEqualTo(200);
    }

    // Round robin would send 20; once measured, the slow one always loses the comparison.
    assertThat(slow.hits.get()).isLessThanOrEqualTo(3);
    assertThat(fast1.hits.get() + fast2.hits.get() + slow.hits.get()).isEqualTo(n);
  }
}
