package dev.portage.bench.tunnel;

import com.google.protobuf.ByteString;
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
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Conn} over one konnectivity {@code ProxyService.Proxy} stream, the way kube-apiserver uses
 * it: DIAL_REQ/DIAL_RSP, then DATA both ways, CLOSE_REQ to end. Inbound flow control is manual (at most
 * {@value #WINDOW} packets buffered); outbound waits for {@code isReady()}. One reader and one writer
 * thread.
 */
final class GrpcConn implements Conn {
  private static final int CHUNK = 32 * 1024;
  private static final int WINDOW = 8;
  private static final Object END = new Object();

  private final BlockingQueue<Object> inbound = new LinkedBlockingQueue<>();
  private final Object readyLock = new Object();
  private volatile ClientCallStreamObserver<Packet> requests;
  private final In in = new In();
  private final Out out = new Out();
  private volatile boolean ended;
  private long connectID;

  private GrpcConn(Channel channel) {
    ProxyServiceGrpc.newStub(channel).proxy(new ClientResponseObserver<Packet, Packet>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Packet> r) {
        requests = r;
        r.disableAutoRequestWithInitial(WINDOW);
        r.setOnReadyHandler(GrpcConn.this::wake);
      }

      @Override
      public void onNext(Packet p) {
        inbound.add(p);
      }

      @Override
      public void onError(Throwable t) {
        ended = true;
        inbound.add(Status.fromThrowable(t));
        wake();
      }

      @Override
      public void onCompleted() {
        ended = true;
        inbound.add(END);
        wake();
      }
    });
  }

  /** Opens a stream and dials {@code target} through it. */
  static GrpcConn dial(Channel channel, String target) throws IOException {
    GrpcConn c = new GrpcConn(channel);
    long random = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    c.send(Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(target).setRandom(random))
        .build());
    Object first = c.take();
    if (!(first instanceof Packet p) || p.getType() != PacketType.DIAL_RSP || !p.getDialResponse().getError().isEmpty()) {
      c.requests.cancel("dial failed", null);
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
      if (o instanceof Packet) {
        requests.request(1);
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

  private synchronized void send(Packet p) throws IOException {
    synchronized (readyLock) {
      while (!requests.isReady() && !ended) {
        try {
          readyLock.wait(1000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException();
        }
      }
    }
    if (ended) {
      throw new IOException("proxy stream ended");
    }
    requests.onNext(p);
  }

  @Override
  public InputStream in() {
    return in;
  }

  @Override
  public OutputStream out() {
    return out;
  }

  /**
   * Sends CLOSE_REQ unless the connection already ended (CLOSE_RSP seen, or the stream is over), then
   * waits for the server to end the stream.
   */
  @Override
  public void close() throws IOException {
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
  }

  private final class In extends InputStream {
    private ByteString current = ByteString.EMPTY;
    private int pos;
    private boolean eof;

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      while (pos == current.size()) {
        if (eof) {
          return -1;
        }
        Object o = take();
        if (o instanceof Packet p && p.getType() == PacketType.DATA) {
          current = p.getData().getData();
          pos = 0;
        } else if (o instanceof Packet p && p.getType() != PacketType.CLOSE_RSP) {
          throw new IOException("unexpected " + p.getType());
        } else if (o instanceof Packet p && !p.getCloseResponse().getError().isEmpty()) {
          throw new IOException("closed by the server: " + p.getCloseResponse().getError());
        } else if (o instanceof Status s && !s.isOk()) {
          throw new IOException("proxy stream failed: " + s);
        } else {
          eof = true; // CLOSE_RSP or the end of the stream
        }
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
        send(Packet.newBuilder().setType(PacketType.DATA)
            .setData(Data.newBuilder().setConnectID(connectID).setData(ByteString.copyFrom(b, off + done, n)))
            .build());
      }
    }
  }
}
