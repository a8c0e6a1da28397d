package dev.portage.bench.soak;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The TCP backend the tunnels end at: echoes every byte back until the peer closes. Blocking I/O on
 * one virtual thread per connection; thread-safe.
 */
final class EchoServer implements AutoCloseable {
  private final ServerSocket listener;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  EchoServer() throws IOException {
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    threads.execute(this::acceptLoop);
  }

  int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket s = listener.accept();
        threads.execute(() -> echo(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void echo(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      s.setTcpNoDelay(true);
      byte[] buf = new byte[64 * 1024];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (IOException e) {
      // the tunnel went away: the client side counts it
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    threads.shutdownNow();
  }
}
