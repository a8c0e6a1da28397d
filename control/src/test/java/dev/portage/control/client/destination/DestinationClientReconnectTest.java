package dev.portage.control.client.destination;

import static dev.portage.control.client.destination.QueueListener.addresses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.portage.api.linkerd.destination.AddrSet;
import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.destination.WeightedAddrSet;
import dev.portage.api.linkerd.net.IPAddress;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Reconnect rules of {@link DestinationClient} against a real gRPC Destination service whose answers
 * each test scripts, for sequences the real server never sends (a remove first, errors on demand).
 */
class DestinationClientReconnectTest {

  static final String WEB = "web.default.svc.cluster.local:80";

  /** Hands each incoming call to the test. */
  static final class Scripted extends DestinationGrpc.DestinationImplBase {
    final LinkedBlockingQueue<ServerCallStreamObserver<Update>> gets = new LinkedBlockingQueue<>();
    final LinkedBlockingQueue<ServerCallStreamObserver<DestinationProfile>> profiles = new LinkedBlockingQueue<>();
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public void get(GetDestination request, StreamObserver<Update> responseObserver) {
      calls.incrementAndGet();
      gets.add((ServerCallStreamObserver<Update>) responseObserver);
    }

    @Override
    public void getProfile(GetDestination request, StreamObserver<DestinationProfile> responseObserver) {
      calls.incrementAndGet();
      profiles.add((ServerCallStreamObserver<DestinationProfile>) responseObserver);
    }
  }

  final FakeClock clock = new FakeClock();
  final Scripted scripted = new Scripted();
  Server server;
  ManagedChannel channel;
  DestinationClient client;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(scripted).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    client = DestinationClient.newBuilder(channel, clock.timeSource()).random(new SplittableRandom(3)).build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    channel.shutdownNow();
    server.shutdownNow();
    assertThat(channel.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  static <T> T take(LinkedBlockingQueue<T> q) throws InterruptedException {
    T t = q.poll(10, TimeUnit.SECONDS);
    assertThat(t).as("a call within 10 s").isNotNull();
    return t;
  }

  static TcpAddress addr(int lastOctet) {
    return TcpAddress.newBuilder()
        .setIp(IPAddress.newBuilder().setIpv4(0x0a000000 | lastOctet))
        .setPort(80)
        .build();
  }

  static Update add(int... lastOctets) {
    WeightedAddrSet.Builder s = WeightedAddrSet.newBuilder();
    for (int o : lastOctets) {
      s.addAddrs(WeightedAddr.newBuilder().setAddr(addr(o)).setWeight(10_000));
    }
    return Update.newBuilder().setAdd(s).build();
  }

  static Update remove(int... lastOctets) {
    AddrSet.Builder s = AddrSet.newBuilder();
    for (int o : lastOctets) {
      s.addAddrs(addr(o));
    }
    return Update.newBuilder().setRemove(s).build();
  }

  /** Waits until the client scheduled its reconnect (it learns of the end on a gRPC thread). */
  void awaitReconnectScheduled() {
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 1);
  }

  @Test
  void removeFirstAfterReconnectIsIgnoredAndTheNextAddResets() throws Exception {
    QueueListener l = new QueueListener();
    client.watchEndpoints(WEB, l);
    ServerCallStreamObserver<Update> first = take(scripted.gets);
    first.onNext(add(1, 2));
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.1:80", "10.0.0.2:80");
    first.onNext(remove(2));
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.1:80");

    first.onError(Status.UNAVAILABLE.asRuntimeException());
    awaitReconnectScheduled();
    clock.advance(Duration.ofMillis(110));
    ServerCallStreamObserver<Update> second = take(scripted.gets);
    // A remove first would, if applied, also end the reset state and make the add merge into {1, 3}.
    second.onNext(remove(9));
    second.onNext(add(3));

    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.3:80");
    second.onNext(add(4));
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.3:80", "10.0.0.4:80");
    assertThat(l.sets).isEmpty();
  }

  @Test
  void noEndpointsFirstAfterReconnectClearsTheSet() throws Exception {
    QueueListener l = new QueueListener();
    client.watchEndpoints(WEB, l);
    ServerCallStreamObserver<Update> first = take(scripted.gets);
    first.onNext(add(1));
    l.nextSet();
    first.onCompleted(); // even a clean end is reconnected
    awaitReconnectScheduled();
    clock.advance(Duration.ofMillis(110));

    take(scripted.gets)
        .onNext(Update.newBuilder().setNoEndpoints(dev.portage.api.linkerd.destination.NoEndpoints.newBuilder().setExists(false)).build());

    EndpointSet s = l.nextSet();
    assertThat(s.isEmpty()).isTrue();
    assertThat(s.exists()).isFalse();
  }

  @Test
  void backoffGrowsWhileFailingAndRestartsOnceAStreamIsEstablished() throws Exception {
    client.watchEndpoints(WEB, new QueueListener());

    take(scripted.gets).onError(Status.UNAVAILABLE.asRuntimeException());
    awaitReconnectScheduled();
    assertThat(clock.nextDeadline()).isBetween(Duration.ofMillis(100), Duration.ofMillis(110));
    clock.advance(Duration.ofMillis(99));
    assertThat(scripted.calls.get()).isEqualTo(1);
    clock.advance(Duration.ofMillis(11));

    take(scripted.gets).onError(Status.INTERNAL.asRuntimeException());
    awaitReconnectScheduled();
    assertThat(clock.nextDeadline()).isBetween(Duration.ofMillis(200), Duration.ofMillis(220));
    clock.advance(Duration.ofMillis(220));

    take(scripted.gets).onError(Status.RESOURCE_EXHAUSTED.asRuntimeException());
    awaitReconnectScheduled();
    assertThat(clock.nextDeadline()).isBetween(Duration.ofMillis(400), Duration.ofMillis(440));
    clock.advance(Duration.ofMillis(440));

    ServerCallStreamObserver<Update> established = take(scripted.gets);
    established.onNext(add(1));
    established.onError(Status.UNAVAILABLE.asRuntimeException());
    awaitReconnectScheduled();
    assertThat(clock.nextDeadline()).isBetween(Duration.ofMillis(100), Duration.ofMillis(110));
    assertThat(scripted.calls.get()).isEqualTo(4);
  }

  @Test
  void failedPreconditionEndsTheWatchForGood() throws Exception {
    QueueListener l = new QueueListener();
    client.watchProfile(WEB, l);

    take(scripted.profiles).onError(Status.FAILED_PRECONDITION.withDescription("no").asRuntimeException());

    assertThat(l.awaitError().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.activeWatches() == 0);
    assertThat(clock.pendingTasks()).isZero();
    clock.advance(Duration.ofMinutes(5));
    assertThat(scripted.calls.get()).isEqualTo(1);
  }

  @Test
  void profileWatchReconnectsAndDoesNotRepeatAnEqualProfile() throws Exception {
    QueueListener l = new QueueListener();
    client.watchProfile(WEB, l);
    DestinationProfile p = DestinationProfile.newBuilder().setFullyQualifiedName("web.default.svc.cluster.local").build();
    ServerCallStreamObserver<DestinationProfile> first = take(scripted.profiles);
    first.onNext(p);
    assertThat(l.nextProfile()).isEqualTo(p);
    first.onError(Status.UNAVAILABLE.asRuntimeException());
    awaitReconnectScheduled();
    clock.advance(Duration.ofMillis(110));

    ServerCallStreamObserver<DestinationProfile> second = take(scripted.profiles);
    second.onNext(p);
    DestinationProfile opaque = p.toBuilder().setOpaqueProtocol(true).build();
    second.onNext(opaque);

    assertThat(l.nextProfile()).isEqualTo(opaque);
    assertThat(l.profiles).isEmpty();
  }

  @Test
  void closingAWatchCancelsItsStreamAndPendingReconnect() throws Exception {
    DestinationWatch connected = client.watchEndpoints(WEB, new QueueListener());
    DestinationWatch waiting = client.watchEndpoints("api.default.svc.cluster.local:80", new QueueListener());
    ServerCallStreamObserver<Update> a = take(scripted.gets);
    ServerCallStreamObserver<Update> b = take(scripted.gets);
    b.onError(Status.UNAVAILABLE.asRuntimeException());
    awaitReconnectScheduled();

    waiting.close();
    connected.close();
    connected.close();

    // close() hands the cancel to the client's context, which a gRPC thread may be draining
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 0);
    await().atMost(Duration.ofSeconds(10)).until(a::isCancelled);
    assertThat(client.activeWatches()).isZero();
    clock.advance(Duration.ofSeconds(1));
    assertThat(scripted.calls.get()).isEqualTo(2);
  }

  @Test
  void logsOneWarnPerOutageAndOneInfoWhenTheStreamIsBack() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(ReconnectingStream.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      client.watchEndpoints(WEB, new QueueListener());
      ServerCallStreamObserver<Update> first = take(scripted.gets);
      first.onNext(add(1));
      first.onError(Status.UNAVAILABLE.asRuntimeException());
      awaitReconnectScheduled();
      clock.advance(Duration.ofMillis(110));
      take(scripted.gets).onError(Status.UNAVAILABLE.asRuntimeException()); // still down: no second WARN
      awaitReconnectScheduled();
      clock.advance(Duration.ofMillis(220));
      take(scripted.gets).onNext(add(2));

      await().atMost(Duration.ofSeconds(10)).until(() -> logs.list.stream().anyMatch(e -> e.getLevel() == Level.INFO));
      assertThat(logs.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO)))
          .extracting(e -> e.getLevel() + " " + e.getFormattedMessage())
          .containsExactly(
              "WARN destination stream " + WEB + " lost (Status{code=UNAVAILABLE, description=null, cause=null});"
                  + " keeping the last answer, reconnecting with backoff",
              "INFO destination stream " + WEB + " re-established");
    } finally {
      logger.detachAppender(logs);
    }
  }
}
