package dev.portage.tunnel.interop;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP server the agents dial: writes back every byte it reads, optionally after sending
 * a greeting (or sends the greeting and closes: the remote end closing). Counts open sockets so tests see when the tunnel closed them, and can
 * close them itself (the remote end closing). One virtual thread per socket.
 */
final class EchoBackend implements AutoCloseable {
  private final ServerSocket listener;
  private final byte[] greeting;
  private final boolean closeAfterGreeting;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger accepted = new AtomicInteger();

  EchoBackend() throws IOException {
    this(new byte[0], false);
  }

  /** Sends {@code greeting} first; then closes the socket, or echoes. */
  EchoBackend(byte[] greeting, boolean closeAfterGreeting) throws IOException {
    this.greeting = greeting;
    this.closeAfterGreeting = closeAfterGreeting;
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    threads.execute(this::acceptLoop);
  }

  String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  int openConnections() {
    return open.size();
  }

  int acceptedConnections() {
    return accepted.get();
  }

  /** Closes every accepted socket: the remote end of each tunnel goes away. */
  void closeConnections() throws IOException {
    for (Socket s : open) {
      s.close();
    }
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        open.add(s);
        accepted.incrementAndGet();
        threads.execute(() -> echo(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void echo(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      out.write(greeting);
      out.flush();
      if (!closeAfterGreeting) {
        in.transferTo(out);
      }
    } catch (IOException e) {
      // closed by the tunnel or by closeConnections()
    } finally {
      open.remove(s);
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    closeConnections();
    threads.shutdownNow();
  }
}
