package dev.portage.control.e2e;

import static dev.portage.control.e2e.RuleStream.TAG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.control.ControlPlane;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many dds subscribers over real gRPC: convergence after a burst and while subscribing during changes,
 * and isolation from a client that never reads.
 */
class FanOutEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final Planes planes = new Planes();

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  /** A TagRoute "shop" with the given priority and {@code addresses} tag addresses (payload size). */
  private static SourceObject tagRoute(int priority, int addresses) {
    ObjectNode body = JSON.createObjectNode();
    body.put("apiVersion", "dubbo.apache.org/v1alpha1");
    body.put("kind", "TagRoute");
    body.putObject("metadata").put("name", "shop").put("namespace", "default");
    ObjectNode spec = body.putObject("spec").put("key", "shop").put("enabled", true).put("priority", priority);
    ArrayNode addrs = spec.putArray("tags").addObject().put("name", "gray").putArray("addresses");
    for (int i = 0; i < addresses; i++) {
      addrs.add("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255) + ":20880");
    }
    return SourceObject.of(body, Integer.toString(priority));
  }

  private List<ManagedChannel> channels(ControlPlane plane, int n) {
    List<ManagedChannel> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(planes.channel(plane));
    }
    return out;
  }

  @Test
  void thousandSubscribersConvergeOnTheLastOfFiveHundredChanges() throws Exception {
    ControlPlane plane = planes.start(Planes.local().dir(dir).build());
    ResourceStore store = plane.store();
    store.put(tagRoute(0, 1), 0);
    List<ManagedChannel> channels = channels(plane, 4);
    List<RuleStream> streams = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      RuleStream s = RuleStream.openLatestOnly(channels.get(i % channels.size()));
      s.subscribe(TAG);
      streams.add(s);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> streams.stream().allMatch(s -> s.received >= 1));

    for (int p = 1; p <= 500; p++) {
      store.put(tagRoute(p, 1), 0);
    }
    long last = store.kindRevision(TAG);

    await().atMost(Duration.ofSeconds(30)).until(() -> streams.stream().allMatch(s -> s.lastRevision == last));
    for (RuleStream s : streams) {
      assertThat(RuleStream.priorities(s.last)).containsExactly(500);
      assertThat(s.outOfOrder).isFalse();
      assertThat(s.closed).isNotDone();
    }
    assertThat(plane.ruleConnectionCount()).isEqualTo(1000);
  }

  @Test
  void clientThatNeverReadsDoesNotSlowTheOthers() throws Exception {
    ControlPlane plane = planes.start(Planes.local().dir(dir).build());
    ResourceStore store = plane.store();
    int addresses = 20_000; // a ~400 KB push: more than the stalled client's flow-control window
    store.put(tagRoute(0, addresses), 0);

    ManagedChannel stalledChannel = planes.closeLater(new Closing(NettyChannelBuilder.forAddress(plane.grpcAddress())
        .usePlaintext().flowControlWindow(65_535).build())).channel;
    RuleStream stalled = RuleStream.openNeverReading(stalledChannel);
    stalled.subscribe(TAG);
    await().atMost(Duration.ofSeconds(10)).until(() -> plane.ruleConnectionCount() == 1);

    List<ManagedChannel> channels = channels(plane, 2);
    List<RuleStream> readers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      RuleStream s = RuleStream.openLatestOnly(channels.get(i % channels.size()));
      s.subscribe(TAG);
      readers.add(s);
    }
    // The changes start while the readers' subscriptions are still being processed (and possibly
    // while the stalled client's first one builds the type's state): each must still get every change.
    for (int p = 1; p <= 20; p++) {
      store.put(tagRoute(p, addresses), 0);
      int priority = p;
      // every change reaches every reader while the stalled client still has its first push unread
      await().atMost(Duration.ofSeconds(10))
          .until(() -> readers.stream().allMatch(s -> s.last != null && RuleStream.priorities(s.last).get(0) == priority));
    }
    assertThat(stalled.received).isZero();
    assertThat(readers).allSatisfy(s -> assertThat(s.closed).isNotDone());
  }

  @Test
  void readersSubscribingWhileChangesFlowConvergeOnTheLastRevision() throws Exception {
    ControlPlane plane = planes.start(Planes.local().dir(dir).build());
    ResourceStore store = plane.store();
    int addresses = 1_000; // a ~20 KB state: building it takes long enough for subscriptions to overlap
    store.put(tagRoute(0, addresses), 0);
    List<ManagedChannel> channels = channels(plane, 2);
    List<RuleStream> readers = new ArrayList<>();
    // No subscription before the first change: the type's first state is built by racing subscribers.
    for (int p = 1; p <= 20; p++) {
      RuleStream s = RuleStream.openLatestOnly(channels.get(p % channels.size()));
      s.subscribe(TAG);
      readers.add(s);
      store.put(tagRoute(p, addresses), 0);
    }
    long last = store.kindRevision(TAG);

    await().atMost(Duration.ofSeconds(30)).until(() -> readers.stream().allMatch(s -> s.lastRevision == last));
    for (RuleStream s : readers) {
      assertThat(RuleStream.priorities(s.last)).containsExactly(20);
      assertThat(s.outOfOrder).isFalse();
      assertThat(s.closed).isNotDone();
    }
    assertThat(plane.ruleConnectionCount()).isEqualTo(20);
  }

  private record Closing(ManagedChannel channel) implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
