package dev.portage.bench.tunnel;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import dev.portage.tunnel.internal.PacketMarshaller;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link Conn} over one konnectivity {@code ProxyService.Proxy} stream, the way kube-apiserver uses
 * it: DIAL_REQ/DIAL_RSP, then DATA both ways, CLOSE_REQ to end. One user thread; gRPC's callbacks run
 * on the channel's transport thread (direct executor) and only queue and notify.
 *
 * <p>Kept as lean as a reasonable client (the bench measures the tunnel, not this JVM):
 * <ul>
 *   <li>Received packets are parsed by {@link PacketMarshaller} (the message is read once into its own
 *       array and DATA payloads alias it), and {@link #drain()} only counts payload bytes: the one copy
 *       left per received byte is gRPC's, out of Netty's buffers into the message. (The socket routes'
 *       plain read loop copies each byte once too, kernel to array.) {@link #in()} still copies into the
 *       caller's array, as any {@code InputStream} must.
 *   <li>Inbound flow control is manual (at most {@value #WINDOW} packets queued), but the next packet is
 *       requested on the transport thread as a packet arrives while the queue is short; the user thread
 *       requests only when it drains a long queue. (Requesting from the user thread per packet woke the
 *       transport thread once per packet: gRPC runs a request on its own thread.)
 *   <li>The call starts and DIAL_REQ is sent in one task on the transport thread when its executor is
 *       known, so the stream's HEADERS and DIAL_REQ leave in one write; control packets never wait for
 *       {@code isReady()} (gRPC buffers them, as grpc-go's {@code Send} does); DATA waits for it.
 *   <li>DATA is sent in chunks of up to 256 KiB, wrapping the caller's array (gRPC serializes it inside
 *       {@code sendMessage}; the channel has retries off, so nothing keeps the message).
 * </ul>
 */
final class GrpcConn implements Conn {
  static final MethodDescriptor<Packet, Packet> PROXY = PacketMarshaller.of(ProxyServiceGrpc.getProxyMethod());

  private static final int CHUNK = 256 * 1024;
  private static final int WINDOW = 8;
  /** While at most this many packets are queued, the transport thread requests the next one itself. */
  private static final int REQUEST_ON_ARRIVAL = WINDOW / 2;
  private static final Object END = new Object();

  private final ClientCall<Packet, Packet> call;
  private final BlockingQueue<Object> inbound = new LinkedBlockingQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final Object readyLock = new Object();
  private final AutoCloseable onClose;
  private final In in = new In();
  private final Out out = new Out();
  private volatile boolean ended;
  private long connectID;

  private GrpcConn(Channel channel, AutoCloseable onClose) {
    this.call = channel.newCall(PROXY, CallOptions.DEFAULT);
    this.onClose = onClose;
  }

  private final class Listener extends ClientCall.Listener<Packet> {
    @Override
    public void onMessage(Packet p) {
      inbound.add(p);
      if (queued.incrementAndGet() <= REQUEST_ON_ARRIVAL) {
        call.request(1); // on the transport thread: no hand-off
      }
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      ended = true;
      inbound.add(status.isOk() ? END : status);
      wake();
    }

    @Override
    public void onReady() {
      wake();
    }
  }

  /**
   * Opens a stream on {@code channel} and dials {@code target} through it. {@code transport} is the
   * channel's own transport thread: starting the call and sending DIAL_REQ there puts both into one
   * write. {@code onClose} runs after the stream ended (e.g. closes a single-use channel).
   */
  static GrpcConn dial(Channel channel, Executor transport, String target, AutoCloseable onClose) throws IOException {
    GrpcConn c = new GrpcConn(channel, onClose);
    long random = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    Packet req = Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(target).setRandom(random))
        .build();
    Runnable start = () -> {
      c.call.start(c.new Listener(), new Metadata());
      c.call.request(WINDOW);
      c.call.sendMessage(req);
    };
    try {
      CompletableFuture.runAsync(start, transport).get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException();
    } catch (ExecutionException | TimeoutException e) {
      c.closeQuietly();
      throw new IOException("starting the Proxy call failed", e);
    }
    Object first = c.take();
    if (!(first instanceof Packet p) || p.getType() != PacketType.DIAL_RSP || !p.getDialResponse().getError().isEmpty()) {
      c.call.cancel("dial failed", null);
      c.closeQuietly();
      throw new IOException("dial " + target + " failed: " + first);
    }
    c.connectID = p.getDialResponse().getConnectID();
    return c;
  }

  private Object take() throws IOException {
    try {
      Object o = inbound.poll(120, TimeUnit.SECONDS);
      if (o == null) {
        throw new IOException("nothing received for 120 s");
      }
      if (o instanceof Packet && queued.getAndDecrement() > REQUEST_ON_ARRIVAL) {
        call.request(1); // its arrival found a long queue and left the request to us
      }
      return o;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException();
    }
  }

  private void wake() {
    synchronized (readyLock) {
      readyLock.notifyAll();
    }
  }

  /** Sends {@code p}; DATA first waits until the stream is ready (bounded buffering). */
  private void send(Packet p) throws IOException {
    if (p.getType() == PacketType.DATA) {
      synchronized (readyLock) {
        while (!call.isReady() && !ended) {
          try {
            readyLock.wait(1000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException();
          }
        }
      }
    }
    if (ended) {
      throw new IOException("proxy stream ended");
    }
    call.sendMessage(p);
  }

  @Override
  public InputStream in() {
    return in;
  }

  @Override
  public OutputStream out() {
    return out;
  }

  /** Counts the payload bytes up to CLOSE_RSP or the stream's end without copying them. */
  @Override
  public long drain() throws IOException {
    long n = in.current.size() - in.pos;
    in.pos = in.current.size();
    for (ByteString d; (d = in.next()) != null; ) {
      n += d.size();
    }
    return n;
  }

  /**
   * Sends CLOSE_REQ unless the connection already ended (CLOSE_RSP seen, or the stream is over), then
   * waits for the server to end the stream.
   */
  @Override
  public void close() throws IOException {
    try {
      if (!in.eof && !ended) {
        try {
          send(Packet.newBuilder().setType(PacketType.CLOSE_REQ)
              .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectID)).build());
        } catch (IOException endedMeanwhile) {
          return; // the server ended the stream first: nothing left to close
        }
      }
      while (!ended) {
        take();
      }
    } finally {
      closeQuietly();
    }
  }

  private void closeQuietly() {
    try {
      onClose.close();
    } catch (Exception e) {
      System.err.println("closing a gRPC connection: " + e);
    }
  }

  private final class In extends InputStream {
    private ByteString current = ByteString.EMPTY;
    private int pos;
    private boolean eof;

    /** The next DATA payload, or null at CLOSE_RSP or the stream's end. */
    ByteString next() throws IOException {
      while (!eof) {
        Object o = take();
        if (o instanceof Packet p && p.getType() == PacketType.DATA) {
          return p.getData().getData();
        } else if (o instanceof Packet p && p.getType() != PacketType.CLOSE_RSP) {
          throw new IOException("unexpected " + p.getType());
        } else if (o instanceof Packet p && !p.getCloseResponse().getError().isEmpty()) {
          throw new IOException("closed by the server: " + p.getCloseResponse().getError());
        } else if (o instanceof Status s) {
          throw new IOException("proxy stream failed: " + s);
        } else {
          eof = true; // CLOSE_RSP or the end of the stream
        }
      }
      return null;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      while (pos == current.size()) {
        ByteString d = next();
        if (d == null) {
          return -1;
        }
        current = d;
        pos = 0;
      }
      int n = Math.min(len, current.size() - pos);
      current.copyTo(b, pos, off, n);
      pos += n;
      return n;
    }
  }

  private final class Out extends OutputStream {
    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      for (int done = 0; done < len; done += CHUNK) {
        int n = Math.min(CHUNK, len - done);
        // gRPC serializes the message inside sendMessage (retries are off): the caller's array may be
        // wrapped instead of copied.
        send(Packet.newBuilder().setType(PacketType.DATA)
            .setData(Data.newBuilder().setConnectID(connectID).setData(UnsafeByteOperations.unsafeWrap(b, off + done, n)))
            .build());
      }
    }
  }
}
