package dev.portage.tunnel.interop;

import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A Portage agent on real time (the peer across the wire is another process, so a fake clock would
 * not move it), with its own timer thread; closing stops both.
 */
final class RealTimeAgent implements AutoCloseable {
  final TunnelAgent agent;
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  RealTimeAgent(int serverAgentPort, String agentId, String identifiers) throws IOException {
    this(builder(serverAgentPort, agentId, identifiers).build());
  }

  RealTimeAgent(TunnelAgentConfig config) throws IOException {
    agent = new TunnelAgent(config, TimeSource.system(scheduler), new PrometheusRegistry());
    try {
      agent.start();
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  static TunnelAgentConfig.Builder builder(int serverAgentPort, String agentId, String identifiers) {
    return TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(serverAgentPort)
        .agentId(agentId)
        .agentIdentifiers(identifiers)
        .healthServerPort(-1)
        .adminServerPort(-1);
  }

  @Override
  public void close() {
    agent.close();
    scheduler.shutdownNow();
  }
}
