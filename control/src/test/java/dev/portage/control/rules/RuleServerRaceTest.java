package dev.portage.control.rules;

import static dev.portage.control.rules.DdsHarness.TAG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.rules.TagRouteToClient;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Subscriptions that race store changes, with the interleaving driven explicitly through the rule
 * server's first-build seam (no repetition, no timing): every subscriber ends at the latest revision.
 */
class RuleServerRaceTest {

  private final ExecutorService other = Executors.newSingleThreadExecutor();
  private DdsHarness h;

  @AfterEach
  void tearDown() throws Exception {
    other.shutdownNow();
    assertThat(other.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    if (h != null) {
      h.close();
    }
  }

  private static int priority(ObserveResponse r) throws Exception {
    return r.getData(0).unpack(TagRouteToClient.class).getSpec().getPriority();
  }

  /**
   * B finds no state and pauses before listing; A builds and gets revision r0; the store moves to r1;
   * B lists r1 and installs it. The debounced flush of r1 then builds the same revision that is
   * already installed: A, holding r0, must still be brought to r1.
   */
  @Test
  void subscriberHoldingAnOlderFirstStateGetsTheNewerOneAnotherSubscriberBuilt() throws Exception {
    h = new DdsHarness();
    long r0 = h.put("TagRoute", "ns", "a", "{\"priority\":0}");
    DdsHarness.Stream a = h.open();
    DdsHarness.Stream b = h.open();
    CountDownLatch bPaused = new CountDownLatch(1);
    CountDownLatch bResume = new CountDownLatch(1);
    AtomicInteger builds = new AtomicInteger();
    h.server.onFirstBuild(
        kind -> {
          if (builds.getAndIncrement() == 0) {
            bPaused.countDown();
            try {
              bResume.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });

    Future<?> bSubscribed = other.submit(() -> b.subscribe(TAG));
    assertThat(bPaused.await(10, TimeUnit.SECONDS)).isTrue();
    a.subscribe(TAG);
    ObserveResponse a0 = a.next();
    assertThat(a0.getRevision()).isEqualTo(r0);

    long r1 = h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    bResume.countDown();
    bSubscribed.get(10, TimeUnit.SECONDS);
    ObserveResponse b1 = b.next();
    assertThat(b1.getRevision()).isEqualTo(r1);
    assertThat(builds).hasValue(2);

    a.ack(a0);
    h.clock.advance(Duration.ofSeconds(1)); // the debounced flush of r1
    ObserveResponse a1 = a.next();
    assertThat(a1.getRevision()).isEqualTo(r1);
    assertThat(a1.getNonce()).isEqualTo("2");
    assertThat(priority(a1)).isEqualTo(1);

    a.ack(a1);
    b.ack(b1);
    h.clock.advance(Duration.ofSeconds(5));
    a.assertNoPush();
    b.assertNoPush();
    assertThat(h.server.metrics().unackedPushes.labelValues(TAG).get()).isZero();
  }
}
