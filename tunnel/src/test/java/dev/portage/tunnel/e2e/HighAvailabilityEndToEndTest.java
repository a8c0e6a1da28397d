package dev.portage.tunnel.e2e;

import static dev.portage.tunnel.e2e.MetricValues.SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.TunnelServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two real servers ({@code servercount} 2) behind one address (a round-robin TCP forwarder) and one
 * real agent: the agent ends with exactly one stream to each; when one server dies the agent's sync
 * loop (on a fake clock) connects to its replacement.
 */
class HighAvailabilityEndToEndTest {
  private final FakeClock agentClock = new FakeClock();
  private final List<AutoCloseable> resources = new ArrayList<>();
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  private <T extends AutoCloseable> T use(T t) {
    resources.add(t);
    return t;
  }

  private record Replica(TunnelServer server, PrometheusRegistry registry) {
    double agentStreams() {
      return MetricValues.value(registry, SERVER + "grpc_connections", "service_method", "Connect");
    }
  }

  private Replica replica(String id) {
    PrometheusRegistry registry = new PrometheusRegistry();
    TunnelServer s = TunnelServer.builder(TunnelFixture.serverConfig(FrontendMode.GRPC, id).serverCount(2).build())
        .registry(registry).build().start();
    use(s);
    return new Replica(s, registry);
  }

  private void driveUntil(BooleanSupplier done) {
    agentClock.runDue();
    await().atMost(TunnelFixture.WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (done.getAsBoolean()) {
        return true;
      }
      agentClock.advance(Duration.ofMillis(250));
      return done.getAsBoolean();
    });
  }

  /** One tunnel through {@code r}'s frontend to the echo backend; true when the byte came back. */
  private boolean echoesThrough(Replica r, TcpBackend echo) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", r.server().serverPort()).usePlaintext().build();
    channels.add(ch);
    try (GrpcTunnel t = GrpcTunnel.open(ch)) {
      t.connect(echo.address());
      t.write(new byte[] {7});
      byte[] back = t.read(1);
      t.closeRequest();
      return back[0] == 7 && t.awaitClose().isOk();
    }
  }

  @Test
  void agentHoldsOneStreamPerServerAndReplacesALostOne() throws Exception {
    Replica one = replica("server-1");
    Replica two = replica("server-2");
    RoundRobinForwarder lb = use(new RoundRobinForwarder(one.server().agentPort(), two.server().agentPort()));
    TcpBackend echo = use(TcpBackend.echo());
    TunnelAgentConfig config = TunnelFixture.agentConfig("agent-ha", lb.port()).build();
    TunnelAgent agent = use(new TunnelAgent(config, agentClock.timeSource(), new PrometheusRegistry()).start());

    driveUntil(() -> agent.connectedServers() == 2 && one.server().ready() && two.server().ready());

    // Duplicates (a second stream to a server already held) are closed by the agent.
    await().atMost(TunnelFixture.WAIT).until(() -> one.agentStreams() == 1 && two.agentStreams() == 1);
    assertThat(echoesThrough(one, echo)).isTrue();
    assertThat(echoesThrough(two, echo)).isTrue();

    one.server().close();
    await().atMost(TunnelFixture.WAIT).until(() -> agent.connectedServers() == 1);

    Replica three = replica("server-3");
    lb.setTarget(0, three.server().agentPort());
    driveUntil(() -> agent.connectedServers() == 2 && three.server().ready());

    await().atMost(TunnelFixture.WAIT).until(() -> two.agentStreams() == 1 && three.agentStreams() == 1);
    assertThat(echoesThrough(three, echo)).isTrue();
    assertThat(echoesThrough(two, echo)).isTrue();
  }
}
