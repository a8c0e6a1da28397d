package dev.portage.tunnel.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseDial;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.ByteArrayOutputStream;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A konnectivity client built on the generated {@code ProxyServiceGrpc} stub, doing what
 * kube-apiserver and upstream's test client do: one {@code Proxy} stream per connection, DIAL_REQ →
 * DIAL_RSP → DATA both ways → CLOSE_REQ/CLOSE_RSP. Writes respect the stream's {@code isReady()};
 * everything received is queued in order for the test thread. One writer thread at a time.
 */
final class GrpcTunnel implements AutoCloseable {
  static final int CHUNK = 32 * 1024;
  private static final long WAIT_SECONDS = 30;

  private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
  private final Object readyLock = new Object();
  private final ByteArrayOutputStream leftover = new ByteArrayOutputStream();
  private volatile ClientCallStreamObserver<Packet> requests;
  private volatile Status status;
  private long random;
  private long connectID;

  private GrpcTunnel(Channel channel) {
    ProxyServiceGrpc.newStub(channel).proxy(new ClientResponseObserver<Packet, Packet>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Packet> r) {
        requests = r;
        r.setOnReadyHandler(() -> {
          synchronized (readyLock) {
            readyLock.notifyAll();
          }
        });
      }

      @Override
      public void onNext(Packet p) {
        events.add(p);
      }

      @Override
      public void onError(Throwable t) {
        status = Status.fromThrowable(t);
        events.add(status);
        wakeWriters();
      }

      @Override
      public void onCompleted() {
        status = Status.OK;
        events.add(status);
        wakeWriters();
      }
    });
  }

  /** Starts a {@code ProxyService.Proxy} stream. */
  static GrpcTunnel open(Channel channel) {
    return new GrpcTunnel(channel);
  }

  /** Sends DIAL_REQ for {@code address} with a fresh random and returns the DIAL_RSP. */
  Packet dial(String address) {
    do {
      random = ThreadLocalRandom.current().nextLong();
    } while (random == 0);
    send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(address).setRandom(random))
        .build());
    Packet rsp = nextPacket(PacketType.DIAL_RSP);
    assertThat(rsp.getDialResponse().getRandom()).as("DIAL_RSP random").isEqualTo(random);
    connectID = rsp.getDialResponse().getConnectID();
    return rsp;
  }

  /** Dials and requires success; returns the connectID. */
  long connect(String address) {
    Packet rsp = dial(address);
    assertThat(rsp.getDialResponse().getError()).as("dial error").isEmpty();
    assertThat(rsp.getDialResponse().getConnectID()).as("connectID").isPositive();
    return connectID;
  }

  /** Sends DIAL_REQ without waiting for the answer (for tests that cancel a pending dial). */
  long dialAsync(String address) {
    random = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(address).setRandom(random))
        .build());
    return random;
  }

  long connectID() {
    return connectID;
  }

  /** Sends {@code bytes} as DATA packets of at most {@value #CHUNK} bytes, waiting while the stream is not ready. */
  void write(byte[] bytes) {
    for (int off = 0; off < bytes.length; off += CHUNK) {
      int n = Math.min(CHUNK, bytes.length - off);
      send(data(connectID, ByteString.copyFrom(bytes, off, n)));
    }
  }

  void closeRequest() {
    send(Packet.newBuilder().setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectID)).build());
  }

  void closeDial() {
    send(Packet.newBuilder().setType(PacketType.DIAL_CLS)
        .setCloseDial(CloseDial.newBuilder().setRandom(random)).build());
  }

  static Packet data(long connectID, ByteString bytes) {
    return Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectID).setData(bytes)).build();
  }

  /** Sends one packet once the stream can take it. */
  synchronized void send(Packet p) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    synchronized (readyLock) {
      while (!requests.isReady() && status == null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          fail("proxy stream not ready for " + WAIT_SECONDS + " s");
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(readyLock, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
    }
    if (status == null) {
      requests.onNext(p);
    }
  }

  /** Exactly {@code n} bytes of DATA; fails if the connection closes first. */
  byte[] read(int n) {
    while (leftover.size() < n) {
      Packet p = nextPacket();
      if (p.getType() != PacketType.DATA) {
        return fail("expected DATA, got " + p);
      }
      leftover.writeBytes(p.getData().getData().toByteArray());
    }
    byte[] all = leftover.toByteArray();
    leftover.reset();
    leftover.write(all, n, all.length - n);
    byte[] out = new byte[n];
    System.arraycopy(all, 0, out, 0, n);
    return out;
  }

  /** All DATA up to the CLOSE_RSP that ends this connection. */
  byte[] readUntilClose() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(leftover.toByteArray());
    leftover.reset();
    while (true) {
      Packet p = nextPacket();
      switch (p.getType()) {
        case DATA -> out.writeBytes(p.getData().getData().toByteArray());
        case CLOSE_RSP -> {
          assertThat(p.getCloseResponse().getConnectID()).isEqualTo(connectID);
          return out.toByteArray();
        }
        default -> fail("expected DATA or CLOSE_RSP, got " + p);
      }
    }
  }

  /** The next packet; fails if the stream ends or nothing arrives within 30 s. */
  Packet nextPacket() {
    Object e = next();
    if (e instanceof Packet p) {
      return p;
    }
    return fail("stream ended with " + e + " while a packet was expected");
  }

  Packet nextPacket(PacketType type) {
    Packet p = nextPacket();
    assertThat(p.getType()).as("packet %s", p).isEqualTo(type);
    return p;
  }

  /** Waits for the end of the stream, skipping packets. */
  Status awaitClose() {
    while (true) {
      if (next() instanceof Status s) {
        return s;
      }
    }
  }

  void cancel() {
    requests.cancel("client cancels", null);
  }

  void halfClose() {
    synchronized (this) {
      requests.onCompleted();
    }
  }

  Status status() {
    return status;
  }

  private Object next() {
    try {
      Object e = events.poll(WAIT_SECONDS, TimeUnit.SECONDS);
      return e != null ? e : fail("nothing arrived on the proxy stream within " + WAIT_SECONDS + " s");
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      throw new AssertionError(ex);
    }
  }

  private void wakeWriters() {
    synchronized (readyLock) {
      readyLock.notifyAll();
    }
  }

  @Override
  public void close() {
    if (status == null) {
      requests.cancel("test cleanup", null);
    }
  }
}
