package dev.portage.tunnel.server;

import static org.awaitility.Awaitility.await;

import dev.portage.core.time.TimeSource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/** A real {@link TunnelServer} on ephemeral ports with real gRPC channels to it; closes everything. */
final class ServerFixture implements AutoCloseable {
  final PrometheusRegistry registry = new PrometheusRegistry();
  final TunnelServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<AutoCloseable> streams = new ArrayList<>();
  private ManagedChannel agentChannel;
  private ManagedChannel frontendChannel;

  ServerFixture(UnaryOperator<TunnelServerConfig.Builder> customizer, TimeSource time) {
    this(customizer, time, null);
  }

  ServerFixture(UnaryOperator<TunnelServerConfig.Builder> customizer, TimeSource time, KubernetesClient kubernetes) {
    this(customizer, b -> {
      if (time != null) {
        b.timeSource(time);
      }
      return b.kubernetesClient(kubernetes);
    });
  }

  /** With {@code serverCustomizer} applied to the server's builder (collaborators such as allocators). */
  ServerFixture(UnaryOperator<TunnelServerConfig.Builder> customizer, UnaryOperator<TunnelServer.Builder> serverCustomizer) {
    TunnelServerConfig config = customizer.apply(TunnelServerConfig.builder().ephemeralPorts().serverId("server-1")).build();
    server = serverCustomizer.apply(TunnelServer.builder(config).registry(registry)).build().start();
  }

  ServerFixture(UnaryOperator<TunnelServerConfig.Builder> customizer) {
    this(customizer, (TimeSource) null);
  }

  ServerFixture() {
    this(b -> b);
  }

  ManagedChannel agentChannel() {
    if (agentChannel == null) {
      agentChannel = channel(server.agentAddress());
    }
    return agentChannel;
  }

  ManagedChannel frontendChannel() {
    if (frontendChannel == null) {
      frontendChannel = channel((InetSocketAddress) server.frontendAddress());
    }
    return frontendChannel;
  }

  ManagedChannel channel(InetSocketAddress address) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", address.getPort()).usePlaintext().build();
    channels.add(ch);
    return ch;
  }

  /** An agent stream that has received its response headers (so it is registered). */
  TestStream agent(String agentId, String identifiers) {
    TestStream s = track(TestStream.agent(agentChannel(), agentId, identifiers));
    s.awaitHeaders();
    await().atMost(Duration.ofSeconds(10)).until(() ->
        server.router().backends().all().stream().anyMatch(b -> b.agentId().equals(agentId)));
    return s;
  }

  TestStream frontend() {
    return track(TestStream.frontend(frontendChannel()));
  }

  <T extends AutoCloseable> T track(T t) {
    streams.add(t);
    return t;
  }

  /** Waits until no pending dial and no established connection is left. */
  void awaitMapsEmpty() {
    await().atMost(Duration.ofSeconds(10)).until(() ->
        server.router().pending().size() == 0 && server.router().establishedCount() == 0);
  }

  /** A metric's value (gauge/counter value, histogram count); 0 when the series does not exist. */
  double metric(String name, String... labelPairs) {
    for (MetricSnapshot s : registry.scrape()) {
      if (!s.getMetadata().getPrometheusName().equals(name)) {
        continue;
      }
      for (DataPointSnapshot p : s.getDataPoints()) {
        boolean match = true;
        for (int i = 0; i < labelPairs.length; i += 2) {
          if (!labelPairs[i + 1].equals(p.getLabels().get(labelPairs[i]))) {
            match = false;
          }
        }
        if (!match) {
          continue;
        }
        if (p instanceof GaugeSnapshot.GaugeDataPointSnapshot g) {
          return g.getValue();
        }
        if (p instanceof CounterSnapshot.CounterDataPointSnapshot c) {
          return c.getValue();
        }
        if (p instanceof HistogramSnapshot.HistogramDataPointSnapshot h) {
          return h.getCount();
        }
      }
    }
    return 0;
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable s : streams) {
      s.close();
    }
    for (ManagedChannel ch : channels) {
      ch.shutdownNow();
    }
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(5, TimeUnit.SECONDS);
    }
    server.close();
  }
}
