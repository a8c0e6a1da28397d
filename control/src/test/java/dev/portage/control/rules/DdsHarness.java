package dev.portage.control.rules;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.api.dds.ObserveRequest;
import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture: a {@link RuleServer} on a real in-process gRPC server with direct executors (so a
 * request, a clock advance or a store write has had all its effects when the call returns), a fake
 * clock and a real store.
 */
final class DdsHarness implements AutoCloseable {

  static final String TAG = "dubbo.apache.org/v1alpha1/TagRoute";
  static final String CONDITION = "dubbo.apache.org/v1alpha1/ConditionRoute";
  static final String AUTHZ = "dubbo.apache.org/v1alpha1/AuthorizationPolicy";
  static final ObjectMapper JSON = new ObjectMapper();

  final FakeClock clock;
  final ResourceStore store;
  final PrometheusRegistry registry = new PrometheusRegistry();
  final RuleServer server;
  final Server grpc;
  final ManagedChannel channel;

  DdsHarness(RuleServerConfig config, TokenAuthenticator tokens) throws IOException {
    this(config, tokens, InProcessServerBuilder.generateName(), new ResourceStore(), new FakeClock());
  }

  /** A server named {@code name} over an existing store: a "restarted" control plane. */
  DdsHarness(RuleServerConfig config, TokenAuthenticator tokens, String name, ResourceStore store, FakeClock clock)
      throws IOException {
    this.clock = clock;
    this.store = store;
    server = new RuleServer(config, store, clock.timeSource(), registry, tokens);
    server.start();
    grpc =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(server.serviceDefinition())
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  DdsHarness() throws IOException {
    this(RuleServerConfig.defaults(), null);
  }

  /** Writes one object of a kind ("TagRoute") with the given spec JSON; returns the store revision. */
  long put(String kind, String namespace, String name, String specJson) {
    try {
      ObjectNode body = JSON.createObjectNode();
      body.put("apiVersion", "dubbo.apache.org/v1alpha1");
      body.put("kind", kind);
      body.putObject("metadata").put("name", name).put("namespace", namespace);
      body.set("spec", JSON.readTree(specJson));
      return store.put(SourceObject.of(body, "1"), 0);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  long delete(String kind, String namespace, String name) {
    return store.delete(new ResourceKey("dubbo.apache.org/v1alpha1/" + kind, namespace, name), 0);
  }

  Stream open() {
    return open(new Metadata());
  }

  Stream open(Metadata headers) {
    Stream s = new Stream();
    s.requests =
        RuleServiceGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
            .observe(s);
    return s;
  }

  @Override
  public void close() throws InterruptedException {
    server.close();
    channel.shutdownNow();
    grpc.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
    grpc.awaitTermination(5, TimeUnit.SECONDS);
  }

  /** A raw dds stream that records what the server sends. */
  static final class Stream implements StreamObserver<ObserveResponse> {
    final BlockingQueue<ObserveResponse> responses = new LinkedBlockingQueue<>();
    final CompletableFuture<Status> closed = new CompletableFuture<>();
    StreamObserver<ObserveRequest> requests;

    void send(String nonce, String type) {
      requests.onNext(ObserveRequest.newBuilder().setNonce(nonce).setType(type).build());
    }

    void subscribe(String type) {
      send("", type);
    }

    void ack(ObserveResponse r) {
      send(r.getNonce(), r.getType());
    }

    ObserveResponse next() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (System.nanoTime() < deadline) {
        ObserveResponse r = responses.poll(20, TimeUnit.MILLISECONDS);
        if (r != null) {
          return r;
        }
        if (closed.isDone()) {
          throw new AssertionError("stream closed before a push: " + closed.join());
        }
      }
      throw new AssertionError("no push within 5 s");
    }

    void assertNoPush() {
      assertThat(responses).as("pushes").isEmpty();
    }

    Status status() throws Exception {
      return closed.get(5, TimeUnit.SECONDS);
    }

    @Override
    public void onNext(ObserveResponse value) {
      responses.add(value);
    }

    @Override
    public void onError(Throwable t) {
      closed.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      closed.complete(Status.OK);
    }
  }
}
