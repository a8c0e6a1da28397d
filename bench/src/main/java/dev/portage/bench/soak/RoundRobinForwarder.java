package dev.portage.bench.soak;

import dev.portage.bench.LoopbackAcceptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The load balancer in front of the tunnel servers' agent ports: each accepted connection goes to
 * the next target in turn (skipping targets that refuse), relayed byte for byte. Agents connect
 * through it and, told {@code servercount=2}, keep reconnecting until they hold both replicas, as
 * behind a Kubernetes Service. Virtual thread per direction; thread-safe.
 */
final class RoundRobinForwarder implements AutoCloseable {
  private final LoopbackAcceptor acceptor;
  private final List<InetSocketAddress> targets;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  RoundRobinForwarder(List<InetSocketAddress> targets) throws IOException {
    if (targets.isEmpty()) {
      throw new IllegalArgumentException("targets: [] (expected: at least one)");
    }
    this.targets = List.copyOf(targets);
    acceptor = new LoopbackAcceptor(128, this::connect);
  }

  int port() {
    return acceptor.port();
  }

  private void connect(Socket client) {
    int first = Math.floorMod(next.getAndIncrement(), targets.size());
    for (int i = 0; i < targets.size(); i++) {
      InetSocketAddress target = targets.get((first + i) % targets.size());
      Socket upstream = new Socket();
      try {
        upstream.connect(target, 2_000);
        open.add(client);
        open.add(upstream);
        acceptor.execute(() -> pump(client, upstream));
        acceptor.execute(() -> pump(upstream, client));
        return;
      } catch (IOException e) {
        closeQuietly(upstream);
      }
    }
    closeQuietly(client);
  }

  private void pump(Socket from, Socket to) {
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      byte[] buf = new byte[64 * 1024];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (IOException e) {
      // one side went away (a killed replica or agent): close both below
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private void closeQuietly(Socket s) {
    open.remove(s);
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    acceptor.close();
    for (Socket s : open) {
      closeQuietly(s);
    }
  }
}
