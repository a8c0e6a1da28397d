package dev.portage.control.client.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.api.dds.rules.TagRouteToClient;
import dev.portage.control.rules.RuleServer;
import dev.portage.control.rules.RuleServerConfig;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link RulesClient} against a real {@link RuleServer} over the in-process transport. */
class RulesClientTest {

  private static final String TAG = "dubbo.apache.org/v1alpha1/TagRoute";
  private static final String CONDITION = "dubbo.apache.org/v1alpha1/ConditionRoute";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final BackoffPolicy ONE_SECOND =
      new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0, 0.0);

  private final String name = InProcessServerBuilder.generateName();
  private final FakeClock serverClock = new FakeClock();
  private final FakeClock clientClock = new FakeClock();
  private final ResourceStore store = new ResourceStore();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final BlockingQueue<RuleUpdate> updates = new LinkedBlockingQueue<>();
  private ManagedChannel channel;

  private RuleServer rules;
  private Server grpc;

  private void startServer() throws Exception {
    rules = new RuleServer(RuleServerConfig.defaults(), store, serverClock.timeSource(), new PrometheusRegistry(), null);
    rules.start();
    grpc = InProcessServerBuilder.forName(name).directExecutor().addService(rules.serviceDefinition()).build().start();
  }

  private void stopServer() throws Exception {
    rules.close();
    grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private RulesClient client(String... types) {
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    RulesClient c = RulesClient.builder(channel, clientClock.timeSource())
        .subscribe(types)
        .listener(updates::add)
        .backoff(ONE_SECOND)
        .build();
    toClose.add(c);
    c.start();
    return c;
  }

  private long put(String kind, String ns, String name, String spec) throws Exception {
    ObjectNode body = JSON.createObjectNode();
    body.put("apiVersion", "dubbo.apache.org/v1alpha1");
    body.put("kind", kind);
    body.putObject("metadata").put("name", name).put("namespace", ns);
    body.set("spec", JSON.readTree(spec));
    return store.put(SourceObject.of(body, "1"), 0);
  }

  private RuleUpdate next() throws InterruptedException {
    RuleUpdate u = updates.poll(5, TimeUnit.SECONDS);
    assertThat(u).as("an update").isNotNull();
    return u;
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (rules != null) {
      stopServer();
    }
  }

  @Test
  void deliversFullStatesAndAcknowledgesThem() throws Exception {
    startServer();
    put("TagRoute", "ns", "a", "{\"priority\":7}");
    RulesClient c = client(TAG, CONDITION);

    List<RuleUpdate> first = List.of(next(), next());
    RuleUpdate tag = first.stream().filter(u -> u.type().equals(TAG)).findFirst().orElseThrow();
    assertThat(tag.messages(TagRouteToClient.class).get(0).getSpec().getPriority()).isEqualTo(7);
    assertThat(tag.messages()).hasSize(1).first().isInstanceOf(TagRouteToClient.class);
    assertThat(c.revision(TAG)).isEqualTo(tag.revision());

    // Acknowledged: the next change goes out at once, and no ACK timeout ever fires.
    long rev = put("TagRoute", "ns", "a", "{\"priority\":8}");
    serverClock.advance(Duration.ofMillis(100));
    RuleUpdate second = next();
    assertThat(second.revision()).isEqualTo(rev);
    serverClock.advance(Duration.ofMinutes(1));
    assertThat(rules.connectionCount()).isEqualTo(1);
    assertThat(c.streamsOpened()).isEqualTo(1);
  }

  @Test
  void reconnectsAfterServerRestartAndResumesAtTheLastRevision() throws Exception {
    startServer();
    long rev = put("TagRoute", "ns", "a", "{\"priority\":1}");
    RulesClient c = client(TAG);
    assertThat(next().revision()).isEqualTo(rev);

    stopServer();
    startServer(); // same store: the revision survives the restart
    // The client noticed the stream end and scheduled a reconnect on its clock.
    await().atMost(Duration.ofSeconds(10)).until(() -> clientClock.pendingTasks() == 1);
    assertThat(clientClock.nextDeadline()).isEqualTo(Duration.ofSeconds(1));
    clientClock.advance(Duration.ofSeconds(1));
    assertThat(c.streamsOpened()).isEqualTo(2);
    assertThat(rules.connectionCount()).isEqualTo(1);
    assertThat(updates).as("nothing re-sent at the same revision").isEmpty();

    long rev2 = put("TagRoute", "ns", "a", "{\"priority\":2}");
    serverClock.advance(Duration.ofMillis(100));
    RuleUpdate u = next();
    assertThat(u.revision()).isEqualTo(rev2);
    assertThat(c.revision(TAG)).isEqualTo(rev2);
  }

  @Test
  void listenerFailureLeavesTheStateUnacknowledged() throws Exception {
    startServer();
    put("TagRoute", "ns", "a", "{}");
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    List<Long> seen = new CopyOnWriteArrayList<>();
    RulesClient c = RulesClient.builder(channel, clientClock.timeSource())
        .subscribe(TAG)
        .listener(u -> {
          seen.add(u.revision());
          throw new IllegalStateException("cannot apply");
        })
        .backoff(ONE_SECOND)
        .build();
    toClose.add(c);
    c.start();
    assertThat(seen).hasSize(1);
    assertThat(c.revision(TAG)).isEqualTo(-1);
    // The server gives up on the missing ACK; the client reconnects and gets the state again.
    serverClock.advance(Duration.ofSeconds(30));
    clientClock.advance(Duration.ofSeconds(1));
    assertThat(seen).hasSize(2);
  }

  @Test
  void closeStopsReconnecting() throws Exception {
    startServer();
    RulesClient c = client(TAG);
    next();
    c.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> rules.connectionCount() == 0);
    assertThat(rules.connectionCount()).isZero();
    assertThat(clientClock.pendingTasks()).isZero();
  }

  @Test
  void builderRejectsMissingParts() {
    ManagedChannel ch = InProcessChannelBuilder.forName(name).build();
    try {
      assertThatThrownBy(() -> RulesClient.builder(ch, clientClock.timeSource()).listener(u -> {}).build())
          .hasMessage("types: none (expected: at least one subscribe(...))");
      assertThatThrownBy(() -> RulesClient.builder(ch, clientClock.timeSource()).subscribe(""))
          .hasMessage("type: empty (expected: group/version/Kind)");
      assertThatThrownBy(() -> RulesClient.builder(ch, clientClock.timeSource()).subscribe(TAG).build())
          .hasMessage("listener: missing");
    } finally {
      ch.shutdownNow();
    }
  }
}
