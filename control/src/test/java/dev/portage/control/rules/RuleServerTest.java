package dev.portage.control.rules;

import static dev.portage.control.rules.DdsHarness.CONDITION;
import static dev.portage.control.rules.DdsHarness.TAG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.api.dds.rules.ConditionRouteToClient;
import dev.portage.api.dds.rules.TagRouteToClient;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RuleServerTest {

  private DdsHarness h;

  private DdsHarness start(RuleServerConfig config) throws Exception {
    h = new DdsHarness(config, null);
    return h;
  }

  private DdsHarness start() throws Exception {
    return start(RuleServerConfig.defaults());
  }

  @AfterEach
  void tearDown() throws Exception {
    if (h != null) {
      h.close();
    }
  }

  private static TagRouteToClient tag(ObserveResponse r, int i) throws Exception {
    assertThat(r.getData(i).getTypeUrl())
        .isEqualTo("type.googleapis.com/dubbo.apache.org.v1alpha1.TagRouteToClient");
    return r.getData(i).unpack(TagRouteToClient.class);
  }

  private double counter(io.prometheus.metrics.core.metrics.Counter c, String label) {
    return c.labelValues(label).get();
  }

  @Test
  void subscribeGetsFullStateWithRevisionAndNonceOne() throws Exception {
    start();
    h.put("TagRoute", "ns1", "a", "{\"priority\":3,\"enabled\":true,\"key\":\"app\",\"unknownField\":1,"
        + "\"tags\":[{\"name\":\"gray\",\"addresses\":[\"10.0.0.1\"],"
        + "\"match\":[{\"key\":\"env\",\"value\":{\"exact\":\"gray\"}}]}]}");
    long rev = h.put("TagRoute", "ns2", "b", "{\"priority\":1}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);

    ObserveResponse r = s.next();
    assertThat(r.getNonce()).isEqualTo("1");
    assertThat(r.getType()).isEqualTo(TAG);
    assertThat(r.getRevision()).isEqualTo(rev);
    assertThat(r.getDataCount()).isEqualTo(2);
    TagRouteToClient a = tag(r, 0);
    assertThat(a.getKey()).isEqualTo("a/ns1");
    assertThat(a.getSpec().getPriority()).isEqualTo(3);
    assertThat(a.getSpec().getEnabled()).isTrue();
    assertThat(a.getSpec().getTags(0).getMatch(0).getValue().getExact()).isEqualTo("gray");
    assertThat(tag(r, 1).getKey()).isEqualTo("b/ns2");
    assertThat(h.server.metrics().connectedClients.labelValues(TAG).get()).isEqualTo(1);
    assertThat(counter(h.server.metrics().pushes, TAG)).isEqualTo(1);
  }

  @Test
  void emptyTypeIsPushedAsEmptyStateAtRevisionZero() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(CONDITION);
    ObserveResponse r = s.next();
    assertThat(r.getRevision()).isZero();
    assertThat(r.getDataList()).isEmpty();
    assertThat(r.getNonce()).isEqualTo("1");
  }

  @Test
  void ackThenChangeIsPushedWithNonceTwo() throws Exception {
    start();
    h.put("ConditionRoute", "ns", "c", "{\"conditions\":[\"a => b\"]}");
    DdsHarness.Stream s = h.open();
    s.subscribe(CONDITION);
    s.ack(s.next());

    long rev = h.put("ConditionRoute", "ns", "c", "{\"conditions\":[\"a => c\"],\"scope\":\"service\"}");
    h.clock.advance(Duration.ofMillis(100));
    ObserveResponse r = s.next();
    assertThat(r.getNonce()).isEqualTo("2");
    assertThat(r.getRevision()).isEqualTo(rev);
    ConditionRouteToClient c = r.getData(0).unpack(ConditionRouteToClient.class);
    assertThat(c.getSpec().getConditionsList()).containsExactly("a => c");
    assertThat(c.getSpec().getScope()).isEqualTo("service");
    assertThat(h.server.metrics().ackLatency.labelValues(CONDITION).getCount()).isEqualTo(1);
  }

  @Test
  void deleteIsPushedAsTheSmallerFullState() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{}");
    h.put("TagRoute", "ns", "b", "{}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.ack(s.next());
    long rev = h.delete("TagRoute", "ns", "a");
    h.clock.advance(Duration.ofMillis(100));
    ObserveResponse r = s.next();
    assertThat(r.getRevision()).isEqualTo(rev);
    assertThat(r.getDataCount()).isEqualTo(1);
    assertThat(tag(r, 0).getKey()).isEqualTo("b/ns");
  }

  @Test
  void staleNonceIsIgnoredAndCounted() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    ObserveResponse first = s.next();

    s.send("7", TAG); // never sent
    long rev = h.put("TagRoute", "ns", "a", "{\"priority\":2}");
    h.clock.advance(Duration.ofMillis(100));
    s.assertNoPush(); // "1" is still in flight: the stale nonce did not acknowledge it
    assertThat(counter(h.server.metrics().staleNonces, TAG)).isEqualTo(1);

    s.ack(first);
    ObserveResponse second = s.next();
    assertThat(second.getNonce()).isEqualTo("2");
    assertThat(second.getRevision()).isEqualTo(rev);

    s.ack(first); // an old nonce after a newer push
    assertThat(counter(h.server.metrics().staleNonces, TAG)).isEqualTo(2);
  }

  @Test
  void changesWhileUnacknowledgedCoalesceIntoOnePushOfTheLatest() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    ObserveResponse first = s.next();

    long last = 0;
    for (int i = 2; i <= 4; i++) {
      last = h.put("TagRoute", "ns", "a", "{\"priority\":" + i + "}");
      h.clock.advance(Duration.ofSeconds(1));
    }
    s.assertNoPush();

    s.ack(first);
    ObserveResponse r = s.next();
    assertThat(r.getNonce()).isEqualTo("2");
    assertThat(r.getRevision()).isEqualTo(last);
    assertThat(tag(r, 0).getSpec().getPriority()).isEqualTo(4);
    s.ack(r);
    h.clock.advance(Duration.ofSeconds(5));
    s.assertNoPush();
    assertThat(counter(h.server.metrics().pushes, TAG)).isEqualTo(2);
  }

  @Test
  void missingAckClosesTheStreamWithDeadlineExceeded() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.next();

    h.clock.advance(Duration.ofSeconds(29));
    assertThat(s.closed).isNotDone();
    h.clock.advance(Duration.ofSeconds(1));
    Status st = s.status();
    assertThat(st.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(st.getDescription()).isEqualTo("no ACK for type " + TAG + " nonce 1 within 30s");
    assertThat(counter(h.server.metrics().ackTimeouts, TAG)).isEqualTo(1);
    assertThat(h.server.connectionCount()).isZero();
    assertThat(h.server.metrics().connectedClients.labelValues(TAG).get()).isZero();
  }

  @Test
  void ackCancelsTheTimeout() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.ack(s.next());
    h.clock.advance(Duration.ofMinutes(5));
    assertThat(s.closed).isNotDone();
    assertThat(h.clock.pendingTasks()).isZero();
  }

  @Test
  void changesWithinTheQuietPeriodAreOnePush() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.ack(s.next());

    h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    h.clock.advance(Duration.ofMillis(50));
    long rev = h.put("TagRoute", "ns", "a", "{\"priority\":2}");
    h.clock.advance(Duration.ofMillis(99));
    s.assertNoPush();
    h.clock.advance(Duration.ofMillis(1));
    ObserveResponse r = s.next();
    assertThat(r.getRevision()).isEqualTo(rev);
    s.ack(r);
    h.clock.advance(Duration.ofSeconds(2));
    s.assertNoPush();
  }

  @Test
  void continuousChangesArePushedAtMostDebounceMaxAfterTheFirst() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.ack(s.next());

    long last = h.put("TagRoute", "ns", "a", "{\"priority\":0}");
    for (int ms = 50; ms < 1000; ms += 50) { // a change every 50 ms: never quiet for 100 ms
      h.clock.advance(Duration.ofMillis(50));
      s.assertNoPush();
      last = h.put("TagRoute", "ns", "a", "{\"priority\":" + ms + "}");
    }
    h.clock.advance(Duration.ofMillis(50)); // 1 s after the first change
    ObserveResponse r = s.next();
    assertThat(r.getRevision()).isEqualTo(last);
    assertThat(h.server.metrics().pushLatency.labelValues(TAG).getSum()).isEqualTo(1.0);
  }

  @Test
  void reconnectingClientAtTheCurrentRevisionIsNotResent() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    DdsHarness.Stream first = h.open();
    first.subscribe(TAG);
    ObserveResponse r = first.next();
    first.ack(r);
    first.requests.onCompleted();

    DdsHarness.Stream again = h.open();
    again.send(RuleConnection.RESUME_PREFIX + r.getRevision(), TAG);
    again.assertNoPush();

    long rev = h.put("TagRoute", "ns", "a", "{\"priority\":2}");
    h.clock.advance(Duration.ofMillis(100));
    ObserveResponse next = again.next();
    assertThat(next.getNonce()).isEqualTo("1");
    assertThat(next.getRevision()).isEqualTo(rev);

    DdsHarness.Stream behind = h.open();
    behind.send(RuleConnection.RESUME_PREFIX + r.getRevision(), TAG);
    assertThat(behind.next().getRevision()).isEqualTo(rev);
  }

  @Test
  void unknownTypeIsIgnoredAndTheStreamStaysUsable() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe("example.com/v1/Nope");
    s.subscribe("");
    s.assertNoPush();
    assertThat(s.closed).isNotDone();
    assertThat(h.server.metrics().unknownTypes.get()).isEqualTo(2);
    s.subscribe(TAG);
    assertThat(s.next().getNonce()).isEqualTo("1");
  }

  @Test
  void typesHaveIndependentNoncesAndInFlightPushes() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.subscribe(CONDITION);
    ObserveResponse t = s.next();
    ObserveResponse c = s.next();
    assertThat(List.of(t.getType(), c.getType())).containsExactly(TAG, CONDITION);
    assertThat(t.getNonce()).isEqualTo("1");
    assertThat(c.getNonce()).isEqualTo("1");
    s.ack(c);
    h.put("ConditionRoute", "ns", "x", "{}");
    h.clock.advance(Duration.ofMillis(100));
    ObserveResponse c2 = s.next(); // TagRoute unacked does not hold ConditionRoute back
    assertThat(c2.getType()).isEqualTo(CONDITION);
    assertThat(c2.getNonce()).isEqualTo("2");
  }

  @Test
  void invalidSpecIsLeftOutAndCounted() throws Exception {
    start();
    h.put("TagRoute", "ns", "bad", "{\"priority\":\"high\"}");
    h.put("TagRoute", "ns", "good", "{\"priority\":1}");
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    ObserveResponse r = s.next();
    assertThat(r.getDataCount()).isEqualTo(1);
    assertThat(tag(r, 0).getKey()).isEqualTo("good/ns");
    assertThat(counter(h.server.metrics().conversionErrors, TAG)).isEqualTo(1);
  }

  @Test
  void slowClientDoesNotDelayOthers() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{\"priority\":1}");
    // A raw call that never asks for a message: the server sees it as not ready.
    ClientCall<ObserveRequest, ObserveResponse> slow =
        h.channel.newCall(RuleServiceGrpc.getObserveMethod(), CallOptions.DEFAULT);
    List<ObserveResponse> slowGot = new ArrayList<>();
    CompletableFuture<Status> slowClosed = new CompletableFuture<>();
    slow.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(ObserveResponse message) {
            slowGot.add(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            slowClosed.complete(status);
          }
        },
        new Metadata());
    slow.sendMessage(ObserveRequest.newBuilder().setType(TAG).build());

    DdsHarness.Stream fast = h.open();
    fast.subscribe(TAG);
    fast.ack(fast.next());
    for (int i = 2; i <= 4; i++) {
      h.put("TagRoute", "ns", "a", "{\"priority\":" + i + "}");
      h.clock.advance(Duration.ofMillis(100));
      ObserveResponse r = fast.next();
      assertThat(tag(r, 0).getSpec().getPriority()).isEqualTo(i);
      fast.ack(r);
    }
    assertThat(slowGot).isEmpty();
    assertThat(h.server.connectionCount()).isEqualTo(2);

    h.clock.advance(Duration.ofSeconds(30));
    assertThat(slowClosed.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(fast.closed).isNotDone();
    assertThat(h.server.connectionCount()).isEqualTo(1);
  }

  @Test
  void fullOutboundQueueClosesOnlyThatConnection() throws Exception {
    start(RuleServerConfig.defaults().withQueueLimit(1));
    ClientCall<ObserveRequest, ObserveResponse> slow =
        h.channel.newCall(RuleServiceGrpc.getObserveMethod(), CallOptions.DEFAULT);
    CompletableFuture<Status> slowClosed = new CompletableFuture<>();
    slow.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            slowClosed.complete(status);
          }
        },
        new Metadata());
    slow.sendMessage(ObserveRequest.newBuilder().setType(TAG).build());
    assertThat(slowClosed).isNotDone();
    slow.sendMessage(ObserveRequest.newBuilder().setType(CONDITION).build());

    Status st = slowClosed.get(5, TimeUnit.SECONDS);
    assertThat(st.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(st.getDescription()).contains("outbound queue full");
    assertThat(h.server.metrics().disconnects.labelValues("queue_overflow").get()).isEqualTo(1);

    DdsHarness.Stream other = h.open();
    other.subscribe(TAG);
    assertThat(other.next().getNonce()).isEqualTo("1");
  }

  @Test
  void closingTheServerEndsStreamsWithUnavailable() throws Exception {
    start();
    DdsHarness.Stream s = h.open();
    s.subscribe(TAG);
    s.next();
    h.server.close();
    assertThat(s.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(h.server.connectionCount()).isZero();
    assertThat(h.clock.pendingTasks()).isZero();
  }

  @Test
  void thousandConnectCyclesLeaveNoConnectionBehind() throws Exception {
    start();
    h.put("TagRoute", "ns", "a", "{}");
    h.clock.advance(Duration.ofMillis(100)); // flush the debounce so only per-connection timers remain
    for (int i = 0; i < 1000; i++) {
      DdsHarness.Stream s = h.open();
      s.subscribe(TAG);
      ObserveResponse r = s.next();
      if (i % 2 == 0) {
        s.ack(r);
        s.requests.onCompleted();
        assertThat(s.status().isOk()).isTrue();
      } else {
        s.requests.onError(new RuntimeException("client went away"));
      }
    }
    assertThat(h.server.connectionCount()).isZero();
    assertThat(h.server.metrics().connections.get()).isZero();
    assertThat(h.server.metrics().connectedClients.labelValues(TAG).get()).isZero();
    assertThat(h.clock.pendingTasks()).isZero();
  }

  @Test
  void configRejectsBadValues() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RuleServerConfig.defaults().withAckTimeout(Duration.ZERO))
        .hasMessage("ackTimeout: PT0S (expected: > 0)");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> RuleServerConfig.defaults().withQueueLimit(0))
        .hasMessage("queueLimit: 0 (expected: > 0)");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RuleServerConfig.defaults().withDebounce(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessageStartingWith("debounceMax: PT1S");
  }
}
