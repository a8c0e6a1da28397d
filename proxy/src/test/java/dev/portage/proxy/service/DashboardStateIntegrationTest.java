package dev.portage.proxy.service;

import static dev.portage.proxy.service.ProxyFixture.entry;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.admin.DashboardJson;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service proxy's {@code /dashboard/state} with real connections through it. */
class DashboardStateIntegrationTest {

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private ProxyFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fx.close();
    }
    http.close();
  }

  private DashboardJson state() throws Exception {
    return DashboardJson.fetch(fx.proxy.adminAddress());
  }

  private static List<Map<String, Object>> endpoints(DashboardJson s, String service) {
    return s.rows("Endpoints").stream().filter(r -> service.equals(r.get("service"))).toList();
  }

  @Test
  void showsEveryServiceEndpointWithHealthCostDialsAndConnections() throws Exception {
    try (TestBackend a = TestBackend.start("a"); TestBackend b = TestBackend.start("b")) {
      fx = new ProxyFixture(dir, "services:\n"
          + entry("web", new String[] {a.endpoint(), b.endpoint()}, "")
          + entry("p2c", new String[] {a.endpoint()}, "    balancer: p2c-ewma\n"));

      DashboardJson idle = state();
      assertThat(idle.component()).isEqualTo("service-proxy");
      assertThat(idle.titles()).containsExactly("Service proxy", "Endpoints", "Readiness");
      assertThat(idle.fields("Service proxy"))
          .containsEntry("synced", true)
          .containsEntry("services", 2L)
          .containsEntry("live connections", 0L);
      assertThat(endpoints(idle, "web")).extracting(r -> r.get("endpoint"))
          .containsExactly(a.endpoint(), b.endpoint());
      Map<String, Object> web = endpoints(idle, "web").get(0);
      assertThat(web).containsEntry("healthy", true).containsEntry("dials in flight", 0L)
          .containsEntry("connections", 0L)
          .containsEntry("ewma cost ms", null).containsEntry("listen", HostPort.format(fx.address("web")));
      // Peak-EWMA weighs an endpoint never measured at its 30 ms default RTT.
      assertThat(endpoints(idle, "p2c").get(0)).containsEntry("balancer", "p2c-ewma").containsEntry("ewma cost ms", 30L);

      try (TestClient client = TestClient.connect(fx.address("p2c"))) {
        assertThat(client.readLine()).isEqualTo("a");
        DashboardJson busy = state();
        assertThat(busy.fields("Service proxy")).containsEntry("live connections", 1L);
        // A connect faster than the estimate is blended in over the decay time; none passed on the
        // fake ticker, so the endpoint still costs the 30 ms default once the dial is done.
        assertThat(endpoints(busy, "p2c").get(0))
            .containsEntry("connections", 1L)
            .containsEntry("dials in flight", 0L)
            .containsEntry("ewma cost ms", 30L);
        assertThat(endpoints(busy, "web")).extracting(r -> r.get("connections")).containsOnly(0L);
      }
      await().atMost(Duration.ofSeconds(10)).until(() ->
          Long.valueOf(0).equals(state().fields("Service proxy").get("live connections")));
      assertThat(endpoints(state(), "p2c").get(0)).containsEntry("connections", 0L);
    }
  }
}
