package dev.portage.bench.soak;

import dev.portage.bench.LoopbackAcceptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/**
 * The TCP backend the tunnels end at: echoes every byte back until the peer closes. Blocking I/O on
 * one virtual thread per connection; thread-safe.
 */
final class EchoServer implements AutoCloseable {
  private final LoopbackAcceptor acceptor;

  EchoServer() throws IOException {
    acceptor = new LoopbackAcceptor(1024, EchoServer::echo);
  }

  int port() {
    return acceptor.port();
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
    acceptor.close();
  }
}
