package dev.portage.control.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.api.dds.rules.TagRoute;
import dev.portage.api.dds.rules.TagRouteToClient;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raw dds {@code Observe} stream over a real channel that records every push and, when {@code
 * autoAck}, acknowledges it at once (on the gRPC callback thread). Thread-safe.
 */
final class RuleStream implements ClientResponseObserver<ObserveRequest, ObserveResponse> {

  static final String TAG = "dubbo.apache.org/v1alpha1/TagRoute";

  final BlockingQueue<ObserveResponse> responses = new LinkedBlockingQueue<>();
  final CompletableFuture<Status> closed = new CompletableFuture<>();
  private final boolean autoAck;
  private final boolean keep;
  private final boolean read;
  private volatile ClientCallStreamObserver<ObserveRequest> requests;
  volatile long lastRevision = -1;
  volatile int received;
  volatile ObserveResponse last;
  /** Set when a push's revision was not greater than the one before it. */
  volatile boolean outOfOrder;

  private RuleStream(boolean autoAck, boolean read, boolean keep) {
    this.autoAck = autoAck;
    this.read = read;
    this.keep = keep;
  }

  static RuleStream open(Channel channel, boolean autoAck) {
    RuleStream s = new RuleStream(autoAck, true, true);
    RuleServiceGrpc.newStub(channel).observe(s);
    return s;
  }

  /** An auto-acknowledging stream that keeps only the latest push ({@link #last}), for fan-out tests. */
  static RuleStream openLatestOnly(Channel channel) {
    RuleStream s = new RuleStream(true, true, false);
    RuleServiceGrpc.newStub(channel).observe(s);
    return s;
  }

  /** A client that never reads a response: its transport fills up and stays full. */
  static RuleStream openNeverReading(Channel channel) {
    RuleStream s = new RuleStream(false, false, true);
    RuleServiceGrpc.newStub(channel).observe(s);
    return s;
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<ObserveRequest> requestStream) {
    this.requests = requestStream;
    if (!read) {
      requestStream.disableAutoRequestWithInitial(0);
    }
  }

  void send(String nonce, String type) {
    synchronized (this) {
      requests.onNext(ObserveRequest.newBuilder().setNonce(nonce).setType(type).build());
    }
  }

  void subscribe(String type) {
    send("", type);
  }

  void ack(ObserveResponse r) {
    send(r.getNonce(), r.getType());
  }

  void cancel() {
    requests.cancel("test done", null);
  }

  void complete() {
    synchronized (this) {
      requests.onCompleted();
    }
  }

  @Override
  public void onNext(ObserveResponse r) {
    if (r.getRevision() <= lastRevision) {
      outOfOrder = true;
    }
    lastRevision = r.getRevision();
    received++;
    last = r;
    if (keep) {
      responses.add(r);
    }
    if (autoAck) {
      ack(r);
    }
  }

  @Override
  public void onError(Throwable t) {
    closed.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    closed.complete(Status.OK);
  }

  /** The next push, waiting at most 10 s. */
  ObserveResponse next() throws InterruptedException {
    ObserveResponse r = responses.poll(10, TimeUnit.SECONDS);
    assertThat(r).as("a push within 10 s (stream %s)", closed.isDone() ? closed.join() : "open").isNotNull();
    return r;
  }

  /** The TagRoute priorities of a push, in key order. */
  static List<Integer> priorities(ObserveResponse r) {
    return r.getDataList().stream()
        .map(a -> {
          try {
            return a.unpack(TagRouteToClient.class).getSpec();
          } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
          }
        })
        .map(TagRoute::getPriority)
        .toList();
  }

  static List<String> keys(ObserveResponse r) {
    return r.getDataList().stream()
        .map(a -> {
          try {
            return a.unpack(TagRouteToClient.class).getKey();
          } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
          }
        })
        .toList();
  }
}
