package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real gRPC client stream for tests, acting as an agent ({@code AgentService.Connect}) or a frontend
 * ({@code ProxyService.Proxy}). Records headers, packets and the close status in arrival order.
 */
final class TestStream implements AutoCloseable {
  private final ClientCall<Packet, Packet> call;
  private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
  private final boolean autoRequest;
  private volatile Metadata headers;
  private volatile Status status;

  private TestStream(ClientCall<Packet, Packet> call, Metadata requestHeaders, boolean autoRequest) {
    this.call = call;
    this.autoRequest = autoRequest;
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onHeaders(Metadata h) {
        headers = h;
        events.add(h);
      }

      @Override
      public void onMessage(Packet p) {
        events.add(p);
        if (TestStream.this.autoRequest) {
          call.request(1);
        }
      }

      @Override
      public void onClose(Status s, Metadata trailers) {
        status = s;
        events.add(s);
      }
    }, requestHeaders);
    if (autoRequest) {
      call.request(1);
    }
  }

  static TestStream agent(ManagedChannel ch, Metadata headers) {
    return new TestStream(ch.newCall(AgentServiceGrpc.getConnectMethod(), CallOptions.DEFAULT), headers, true);
  }

  static TestStream agent(ManagedChannel ch, String agentId, String identifiers) {
    Metadata md = new Metadata();
    md.put(dev.portage.tunnel.wire.Metadata.AGENT_ID, agentId);
    if (identifiers != null) {
      md.put(dev.portage.tunnel.wire.Metadata.AGENT_IDENTIFIERS, identifiers);
    }
    return agent(ch, md);
  }

  static TestStream frontend(ManagedChannel ch) {
    return frontend(ch, true);
  }

  static TestStream frontend(ManagedChannel ch, boolean autoRequest) {
    return new TestStream(ch.newCall(ProxyServiceGrpc.getProxyMethod(), CallOptions.DEFAULT), new Metadata(), autoRequest);
  }

  void send(Packet p) {
    synchronized (call) {
      call.sendMessage(p);
    }
  }

  void request(int n) {
    call.request(n);
  }

  void halfClose() {
    call.halfClose();
  }

  void cancel() {
    call.cancel("test cancels", null);
  }

  /** Waits for the response headers (skipping nothing: they must come first). */
  Metadata awaitHeaders() {
    Object e = next();
    if (!(e instanceof Metadata m)) {
      return fail("expected headers first, got " + e);
    }
    return m;
  }

  /** The next packet, skipping headers; fails on close or after 10 s. */
  Packet nextPacket() {
    while (true) {
      Object e = next();
      if (e instanceof Packet p) {
        return p;
      }
      if (e instanceof Status s) {
        return fail("stream closed with " + s + " while a packet was expected");
      }
    }
  }

  /** The next packet, which must be of {@code type}. */
  Packet nextPacket(PacketType type) {
    Packet p = nextPacket();
    assertThat(p.getType()).as("packet %s", p).isEqualTo(type);
    return p;
  }

  /** Waits for the stream to close, skipping packets; returns the status. */
  Status awaitClose() {
    while (true) {
      Object e = next();
      if (e instanceof Status s) {
        return s;
      }
    }
  }

  /** Waits for the close, failing if any packet arrives first. */
  Status awaitCloseWithoutPackets() {
    while (true) {
      Object e = next();
      if (e instanceof Status s) {
        return s;
      }
      if (e instanceof Packet p) {
        return fail("unexpected packet " + p);
      }
    }
  }

  /** True if nothing arrives within {@code millis} (used only to assert absence, after a barrier). */
  Object poll(long millis) {
    try {
      return events.poll(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  Metadata headers() {
    return headers;
  }

  Status status() {
    return status;
  }

  private Object next() {
    try {
      Object e = events.poll(10, TimeUnit.SECONDS);
      if (e == null) {
        return fail("nothing arrived within 10 s");
      }
      return e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    if (status == null) {
      call.cancel("test cleanup", null);
    }
  }
}
