package dev.portage.tunnel.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The load balancer in front of server replicas, as small as it gets: one loopback port that
 * forwards each new TCP connection to the next target port in turn. A target that refuses the
 * connection makes the forwarder close the client's socket. Blocking I/O on virtual threads.
 */
final class RoundRobinForwarder implements AutoCloseable {
  private final ServerSocket listener;
  private final AtomicIntegerArray targets;
  private final AtomicInteger next = new AtomicInteger();
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  RoundRobinForwarder(int... targetPorts) throws IOException {
    targets = new AtomicIntegerArray(targetPorts);
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    threads.execute(this::acceptLoop);
  }

  int port() {
    return listener.getLocalPort();
  }

  /** Points slot {@code i} at another port (a replaced replica). */
  void setTarget(int i, int port) {
    targets.set(i, port);
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return;
      }
      sockets.add(client);
      int port = targets.get(Math.floorMod(next.getAndIncrement(), targets.length()));
      threads.execute(() -> forward(client, port));
    }
  }

  private void forward(Socket client, int port) {
    Socket upstream = new Socket();
    sockets.add(upstream);
    try {
      upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 10_000);
    } catch (IOException refused) {
      closeQuietly(client);
      closeQuietly(upstream);
      return;
    }
    threads.execute(() -> pump(upstream, client));
    pump(client, upstream);
  }

  /** Copies until EOF or an error, then closes both sockets so the peer sees the end at once. */
  private static void pump(Socket from, Socket to) {
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      byte[] buf = new byte[32 * 1024];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (IOException e) {
      // one side went away
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    threads.shutdownNow();
  }
}
