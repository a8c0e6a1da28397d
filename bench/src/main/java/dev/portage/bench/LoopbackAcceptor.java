package dev.portage.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

/**
 * A blocking TCP listener on an ephemeral loopback port that hands each accepted socket to a
 * handler on its own virtual thread: the one accept loop of the benchmark's small servers. The
 * handler owns the socket. Thread-safe; {@link #close()} stops accepting and interrupts handlers.
 */
public final class LoopbackAcceptor implements AutoCloseable {
  private final ServerSocket listener;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  /**
   * @param backlog the listen backlog
   * @param handler serves one accepted socket (on a virtual thread of its own)
   */
  public LoopbackAcceptor(int backlog, Consumer<Socket> handler) throws IOException {
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), backlog);
    threads.execute(() -> acceptLoop(handler));
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** Runs {@code task} on a virtual thread of this acceptor (interrupted by {@link #close()}). */
  public void execute(Runnable task) {
    threads.execute(task);
  }

  private void acceptLoop(Consumer<Socket> handler) {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        threads.execute(() -> handler.accept(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    threads.shutdownNow();
  }
}
