package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.konnectivity.PacketType;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HealthEndpointsIntegrationTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
    http.close();
  }

  private HttpResponse<String> get(InetSocketAddress a, String path) throws Exception {
    HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.getPort() + path))
        .timeout(Duration.ofSeconds(10)).build();
    return http.send(req, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readinessFollowsAgentsWithUpstreamBodies() throws Exception {
    fx = new ServerFixture();
    InetSocketAddress health = fx.server.healthAddress();
    assertThat(get(health, "/healthz").statusCode()).isEqualTo(200);
    // Health answers only, as upstream's health port: metrics and the dashboard are on the admin port.
    for (String path : new String[] {"/metrics", "/dashboard", "/dashboard/state", "/livez/../metrics"}) {
      assertThat(get(health, path).statusCode()).as(path).isEqualTo(404);
    }
    assertThat(get(health, "/healthz").body()).isEqualTo("ok");
    for (String path : new String[] {"/readyz", "/ready"}) {
      HttpResponse<String> r = get(health, path);
      assertThat(r.statusCode()).isEqualTo(500);
      assertThat(r.body()).isEqualTo("no connection to any proxy agent");
    }
    TestStream agent = fx.agent("agent-a", null);
    for (String path : new String[] {"/readyz", "/ready"}) {
      HttpResponse<String> r = get(health, path);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("ok");
    }
    agent.cancel();
    await().atMost(Duration.ofSeconds(10)).until(() -> get(health, "/readyz").statusCode() == 500);
  }

  @Test
  void metricsUseUpstreamNames() throws Exception {
    fx = new ServerFixture(b -> b.adminPort(0));
    TestStream agent = fx.agent("agent-a", "host=node1");
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRspError(1, "connection refused"));
    f.awaitClose();
    fx.frontend().send(Packets.dialReq("10.0.0.5:443", 2));
    agent.nextPacket(PacketType.DIAL_REQ);
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_pending_backend_dials") == 1);

    String body = get(fx.server.adminAddress(), "/metrics").body();
    assertThat(body)
        .contains("konnectivity_network_proxy_server_ready_backends{proxy_strategy=\"default\"} 1.0")
        .contains("konnectivity_network_proxy_server_ready_backends{proxy_strategy=\"destHost\"} 1.0")
        .contains("konnectivity_network_proxy_server_ready_backends{proxy_strategy=\"defaultRoute\"} 0.0")
        .contains("konnectivity_network_proxy_server_grpc_connections{service_method=\"Connect\"} 1.0")
        .contains("konnectivity_network_proxy_server_pending_backend_dials 1.0")
        .contains("konnectivity_network_proxy_server_established_connections 0.0")
        .contains("konnectivity_network_proxy_server_dial_failure_count{reason=\"error_response\"} 1.0")
        .contains("konnectivity_network_proxy_server_stream_packets_total{packet_type=\"DIAL_REQ\",segment=\"to_agent\"} 2.0")
        // dial duration counts successful dials only (the refused one is not in it), in upstream's buckets
        .contains("konnectivity_network_proxy_server_dial_duration_seconds_count 0")
        .contains("konnectivity_network_proxy_server_dial_duration_seconds_bucket{le=\"1.0E-6\"} 0")
        .contains("konnectivity_network_proxy_server_dial_duration_seconds_bucket{le=\"12.5\"} 0")
        .contains("konnectivity_network_proxy_server_frontend_write_duration_seconds_bucket{le=\"0.005\"}")
        .contains("konnectivity_network_proxy_server_ready_backend_connections 1.0")
        .contains("konnectivity_network_proxy_server_culled_leases_count 0.0")
        .contains("konnectivity_network_proxy_server_frontend_write_duration_seconds_count")
        .contains("konnectivity_network_proxy_server_http_connections")
        .contains("konnectivity_network_proxy_server_full_receive_channels{service_method=\"Proxy\"} 0.0")
        .contains("konnectivity_network_proxy_server_receive_queue_overflows_total{service_method=\"Proxy\"} 0.0");
    assertThat(get(fx.server.adminAddress(), "/readyz").body()).isEqualTo("ok");
  }

  @Test
  void successfulDialsAreTimedAndStreamErrorsCountClientCancelAndAgentLossInGoSpelling() throws Exception {
    fx = new ServerFixture(b -> b.adminPort(0));
    TestStream agent = fx.agent("agent-a", null);
    TestStream f = fx.frontend();
    f.send(Packets.dialReq("10.0.0.5:443", 1));
    agent.nextPacket(PacketType.DIAL_REQ);
    agent.send(Packets.dialRsp(1, 7));
    f.nextPacket(PacketType.DIAL_RSP);
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_dial_duration_seconds") == 1);

    f.cancel(); // kube-apiserver's request context ends: upstream's Recv fails with Canceled
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.metric("konnectivity_network_proxy_server_stream_errors",
        "segment", "from_client", "code", "Canceled", "packet_type", "Unknown") == 1);
    agent.cancel(); // the agent goes away
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.metric("konnectivity_network_proxy_server_stream_errors",
        "segment", "from_agent", "code", "Canceled", "packet_type", "Unknown") == 1);
    assertThat(get(fx.server.adminAddress(), "/metrics").body()).contains(
        "konnectivity_network_proxy_server_stream_errors_total{code=\"Canceled\",packet_type=\"Unknown\",segment=\"from_client\"} 1.0");
  }

  @Test
  void profilingServesJfrAndThreadDumpsOnTheAdminPortOnly() throws Exception {
    fx = new ServerFixture(b -> b.adminPort(0).enableProfiling(true));
    assertThat(get(fx.server.adminAddress(), "/debug/pprof/goroutine").body()).contains("portage-server");
    assertThat(get(fx.server.adminAddress(), "/debug/pprof/").statusCode()).isEqualTo(200);
    assertThat(get(fx.server.healthAddress(), "/debug/pprof/goroutine").statusCode()).isEqualTo(404);
  }
}
