package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.admin.DashboardJson;
import dev.portage.core.time.FakeClock;
import java.net.http.HttpClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sidecar's {@code /dashboard/state} after real requests through it to real backends. */
class DashboardStateIntegrationTest {

  static final String WEB = authority("web");

  final FakeClock clock = new FakeClock();
  final HttpClient http = HttpClient.newHttpClient();
  MeshFixture mesh;

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    mesh.service("web");
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
    http.close();
  }

  private DashboardJson state() throws Exception {
    return DashboardJson.fetch(mesh.sidecar.adminAddress());
  }

  private DashboardJson awaitState(Predicate<DashboardJson> condition) {
    return DashboardJson.awaitState(mesh.sidecar.adminAddress(), condition);
  }

  @Test
  void showsEndpointsWithHealthCostAndInFlightAndTheRetryBudget() throws Exception {
    DashboardJson idle = state();
    assertThat(idle.component()).isEqualTo("sidecar");
    assertThat(idle.titles()).containsExactly("Sidecar", "Endpoints", "Service profiles", "Readiness");
    assertThat(idle.fields("Sidecar"))
        .containsEntry("balancer", "p2c-ewma")
        .containsEntry("requests in flight", 0L)
        .containsEntry("discovered authorities", 0L);
    assertThat(idle.rows("Endpoints")).isEmpty();

    Backend a = mesh.backend("a");
    Backend b = mesh.backend("b");
    mesh.endpoints("web", a, b);
    mesh.profile("web", """
        routes:
        - name: flaky
          condition: {pathRegex: /flaky/.*}
          isRetryable: true
        retryBudget: {retryRatio: 0.2, minRetriesPerSecond: 0, ttl: 10s}
        """);
    await().atMost(10, TimeUnit.SECONDS).until(() -> {
      mesh.sidecar.profiles().get(WEB);
      return mesh.sidecar.profiles().peek(WEB).routes().size() == 1;
    });
    for (int i = 0; i < 5; i++) {
      assertThat(RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/flaky/" + i).status()).isEqualTo(200);
    }

    DashboardJson served = state();
    assertThat(served.fields("Sidecar")).containsEntry("discovered authorities", 1L);
    List<Map<String, Object>> endpoints = served.rows("Endpoints");
    assertThat(endpoints).extracting(r -> r.get("endpoint"))
        .containsExactlyInAnyOrder("127.0.0.1:" + a.port(), "127.0.0.1:" + b.port());
    for (Map<String, Object> e : endpoints) {
      assertThat(e).containsEntry("authority", WEB).containsEntry("healthy", true)
          .containsEntry("in flight", 0L).containsEntry("fail-fast", false);
      // No fake time passed during the requests: measured RTTs are floored at 1 ms; one never
      // measured costs the 30 ms default.
      assertThat(((Number) e.get("ewma cost ms")).doubleValue()).isBetween(1.0, 30.0);
    }
    // Five original requests at ratio 0.2 paid for exactly one retry.
    assertThat(served.rows("Service profiles")).containsExactly(Map.of("authority", WEB, "routes", 1L,
        "retryable routes", 1L, "retry budget", true, "retries available", 1L));

    CountDownLatch release = new CountDownLatch(1);
    a.behaviour = ex -> {
      release.await(10, TimeUnit.SECONDS);
      Backend.reply(ex, 200, "late");
    };
    b.behaviour = a.behaviour;
    CompletableFuture<RawHttp.Response> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return RawHttp.send(mesh.sidecar.outboundAddress(), "GET", WEB, "/held");
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    DashboardJson busy = awaitState(s -> Long.valueOf(1).equals(s.fields("Sidecar").get("requests in flight")));
    assertThat(busy.rows("Endpoints")).extracting(r -> (Long) r.get("in flight")).containsExactlyInAnyOrder(0L, 1L);
    release.countDown();
    assertThat(waiting.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
    awaitState(s -> Long.valueOf(0).equals(s.fields("Sidecar").get("requests in flight")));
  }
}
