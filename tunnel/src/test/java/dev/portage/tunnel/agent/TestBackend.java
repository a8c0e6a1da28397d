package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real TCP backend on a loopback port for agent tests: either echoes every byte, or hands each
 * accepted socket to the test. Blocking I/O on virtual threads.
 */
final class TestBackend implements AutoCloseable {
  private final ServerSocket listener;
  private final boolean echo;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final BlockingQueue<Socket> accepted = new LinkedBlockingQueue<>();
  private final List<Socket> all = new CopyOnWriteArrayList<>();

  private TestBackend(boolean echo, int receiveBuffer) throws IOException {
    this.echo = echo;
    listener = new ServerSocket();
    if (receiveBuffer > 0) {
      listener.setReceiveBufferSize(receiveBuffer); // inherited by accepted sockets
    }
    listener.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1000);
    threads.execute(this::acceptLoop);
  }

  static TestBackend echo() throws IOException {
    return new TestBackend(true, 0);
  }

  /** Accepted sockets are handed to the test through {@link #nextSocket()}. */
  static TestBackend manual() throws IOException {
    return new TestBackend(false, 0);
  }

  /** Like {@link #manual()} with a small receive buffer, to make a non-reading backend fill up fast. */
  static TestBackend manualWithSmallBuffer() throws IOException {
    return new TestBackend(false, 4096);
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

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        all.add(s);
        if (echo) {
          threads.execute(() -> echo(s));
        } else {
          accepted.add(s);
        }
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void echo(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      byte[] buf = new byte[16 * 1024];
      int n;
      while ((n = in.read(buf)) >= 0) {
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
