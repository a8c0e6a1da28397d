package dev.portage.tunnel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A real TCP server on a loopback port that the agent dials: echoes, streams a fixed amount of
 * pseudo-random bytes then closes, digests what it receives, or hands each accepted socket to the test. Blocking I/O, one
 * virtual thread per socket.
 */
final class TcpBackend implements AutoCloseable {
  private final ServerSocket listener;
  private final Consumer<Socket> handler;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
  private final List<Socket> all = new CopyOnWriteArrayList<>();

  private TcpBackend(Consumer<Socket> handler) throws IOException {
    this.handler = handler;
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    threads.execute(this::acceptLoop);
  }

  /** Writes back every byte it reads; closes when the peer does. */
  static TcpBackend echo() throws IOException {
    return new TcpBackend(TcpBackend::echo);
  }

  /** Writes {@code bytes} bytes of {@link #payload(long, int)} with seed 1 to each connection, then closes. */
  static TcpBackend source(int bytes) throws IOException {
    byte[] data = payload(1, bytes);
    return new TcpBackend(s -> {
      try (s; OutputStream out = s.getOutputStream()) {
        out.write(data);
      } catch (IOException e) {
        // the tunnel closed it first
      }
    });
  }

  /**
   * Reads an 8-byte length, then that many bytes, answers their SHA-256 and closes. (The tunnel has
   * no half-close: a client EOF closes the whole connection, so the end is announced up front.)
   */
  static TcpBackend sink() throws IOException {
    return new TcpBackend(s -> {
      try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        long left = new java.io.DataInputStream(in).readLong();
        byte[] buf = new byte[64 * 1024];
        for (int n; left > 0 && (n = in.read(buf, 0, (int) Math.min(buf.length, left))) >= 0; left -= n) {
          d.update(buf, 0, n);
        }
        out.write(d.digest());
      } catch (IOException | NoSuchAlgorithmException e) {
        // the tunnel closed it first
      }
    });
  }

  /** Accepted sockets go to the test through {@link #nextSocket()}. */
  static TcpBackend manual() throws IOException {
    return new TcpBackend(null);
  }

  /** Deterministic pseudo-random bytes. */
  static byte[] payload(long seed, int size) {
    byte[] b = new byte[size];
    new SplittableRandom(seed).nextBytes(b);
    return b;
  }

  int port() {
    return listener.getLocalPort();
  }

  String address() {
    return "127.0.0.1:" + port();
  }

  Socket nextSocket() throws InterruptedException {
    Socket s = accepted.poll(10, TimeUnit.SECONDS);
    assertThat(s).as("a backend connection within 10 s").isNotNull();
    return s;
  }

  /** Sockets accepted so far. */
  int acceptedCount() {
    return all.size();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        all.add(s);
        if (handler == null) {
          accepted.add(s);
        } else {
          threads.execute(() -> handler.accept(s));
        }
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void echo(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      byte[] buf = new byte[64 * 1024];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (IOException e) {
      // peer went away
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket s : all) {
      s.close();
    }
    threads.shutdownNow();
  }
}
