package dev.portage.tunnel.e2e;

import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * A real Portage tunnel server and real Portage agents in this process, on loopback port 0, plus the
 * gRPC channels tests open to the server. The server runs on real time; the agents share one {@link
 * FakeClock}, so their sync loop, probes and dial timeouts move only when a test advances it. Closes
 * everything it started.
 */
final class TunnelFixture implements AutoCloseable {
  static final Duration WAIT = Duration.ofSeconds(30);

  final FakeClock agentClock = new FakeClock();
  final PrometheusRegistry serverRegistry = new PrometheusRegistry();
  final TunnelServer server;
  private final Map<TunnelAgent, PrometheusRegistry> agents = new LinkedHashMap<>();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<AutoCloseable> tracked = new ArrayList<>();
  private ManagedChannel frontendChannel;

  private TunnelFixture(TunnelServerConfig config, TimeSource serverTime) {
    TunnelServer.Builder b = TunnelServer.builder(config).registry(serverRegistry);
    if (serverTime != null) {
      b.timeSource(serverTime);
    }
    server = b.build().start();
  }

  static TunnelFixture start(FrontendMode mode) {
    return start(mode, b -> b);
  }

  static TunnelFixture start(FrontendMode mode, UnaryOperator<TunnelServerConfig.Builder> customizer) {
    return new TunnelFixture(customizer.apply(serverConfig(mode, "server-1")).build(), null);
  }

  static TunnelServerConfig.Builder serverConfig(FrontendMode mode, String serverId) {
    return TunnelServerConfig.builder().ephemeralPorts().healthPort(-1).mode(mode).serverId(serverId);
  }

  static TunnelAgentConfig.Builder agentConfig(String agentId, int port) {
    return TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(port)
        .agentId(agentId)
        .healthServerPort(-1)
        .adminServerPort(-1);
  }

  /** Starts an agent connected to this server and waits until the server can pick it. */
  TunnelAgent agent(String agentId) {
    return agent(agentId, b -> b);
  }

  TunnelAgent agent(String agentId, UnaryOperator<TunnelAgentConfig.Builder> customizer) {
    TunnelAgent a = startAgent(customizer.apply(agentConfig(agentId, server.agentPort())).build());
    driveAgentsUntil(() -> a.connectedServers() == 1 && server.ready());
    return a;
  }

  /** Starts an agent on the shared fake clock without waiting for it to connect. */
  TunnelAgent startAgent(TunnelAgentConfig config) {
    PrometheusRegistry registry = new PrometheusRegistry();
    TunnelAgent a = new TunnelAgent(config, agentClock.timeSource(), registry);
    agents.put(a, registry);
    try {
      a.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return a;
  }

  /**
   * Runs the agents' due timers and then advances their clock in 250 ms steps until {@code done}
   * holds: connecting is real socket work, so it is awaited (bounded) between steps.
   */
  void driveAgentsUntil(BooleanSupplier done) {
    agentClock.runDue();
    await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (done.getAsBoolean()) {
        return true;
      }
      agentClock.advance(Duration.ofMillis(250));
      return done.getAsBoolean();
    });
  }

  double agentMetric(TunnelAgent agent, String name, String... labels) {
    return MetricValues.value(agents.get(agent), name, labels);
  }

  double serverMetric(String name, String... labels) {
    return MetricValues.value(serverRegistry, name, labels);
  }

  int proxyPort() {
    return server.serverPort();
  }

  ManagedChannel channel(int port) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    channels.add(ch);
    return ch;
  }

  ManagedChannel frontendChannel() {
    if (frontendChannel == null) {
      frontendChannel = channel(proxyPort());
    }
    return frontendChannel;
  }

  /** A new {@code Proxy} stream on the shared frontend channel, cancelled at close if still open. */
  GrpcTunnel grpcTunnel() {
    return track(GrpcTunnel.open(frontendChannel()));
  }

  <T extends AutoCloseable> T track(T t) {
    synchronized (tracked) {
      tracked.add(t);
    }
    return t;
  }

  /**
   * Waits until neither the server nor any agent holds a tunnel: no frontend stream or CONNECT socket,
   * no pending dial, no established connection, no backend socket, no agent-side dial.
   */
  void awaitNoTunnelState() {
    await().atMost(WAIT).until(this::noTunnelState);
  }

  boolean noTunnelState() {
    if (serverMetric(MetricValues.SERVER + "pending_backend_dials") != 0
        || serverMetric(MetricValues.SERVER + "established_connections") != 0
        || serverMetric(MetricValues.SERVER + "grpc_connections", "service_method", "Proxy") != 0
        || serverMetric(MetricValues.SERVER + "http_connections") != 0) {
      return false;
    }
    for (TunnelAgent a : agents.keySet()) {
      if (a.openEndpointConnections() != 0 || a.pendingDials() != 0
          || agentMetric(a, MetricValues.AGENT + "open_endpoint_connections") != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() throws Exception {
    synchronized (tracked) {
      for (AutoCloseable t : tracked) {
        t.close();
      }
    }
    for (ManagedChannel ch : channels) {
      ch.shutdownNow();
    }
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(5, TimeUnit.SECONDS);
    }
    for (TunnelAgent a : agents.keySet()) {
      a.close();
    }
    server.close();
  }
}
