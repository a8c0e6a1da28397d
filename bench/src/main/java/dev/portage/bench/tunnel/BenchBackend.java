package dev.portage.bench.tunnel;

import dev.portage.bench.LoopbackAcceptor;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.SplittableRandom;

/**
 * The server every route ends at. The first byte a connection sends picks what it does: {@code 'E'}
 * echoes everything after it; {@code 'S'} followed by an 8-byte length streams that many bytes back
 * and closes. Blocking I/O, one virtual thread per connection, so 10,000 idle connections cost no
 * platform threads.
 */
final class BenchBackend implements AutoCloseable {
  static final byte ECHO = 'E';
  static final byte SOURCE = 'S';

  private final LoopbackAcceptor acceptor;
  private final byte[] block = new byte[256 * 1024];

  BenchBackend() throws IOException {
    new SplittableRandom(7).nextBytes(block);
    acceptor = new LoopbackAcceptor(4096, this::serve);
  }

  int port() {
    return acceptor.port();
  }

  private void serve(Socket s) {
    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
      s.setTcpNoDelay(true);
      int command = in.read();
      if (command == ECHO) {
        byte[] buf = new byte[8 * 1024]; // 10,000 idle echo connections must fit a small heap
        for (int n; (n = in.read(buf)) >= 0; ) {
          out.write(buf, 0, n);
        }
      } else if (command == SOURCE) {
        long left = new DataInputStream(in).readLong();
        while (left > 0) {
          int n = (int) Math.min(block.length, left);
          out.write(block, 0, n);
          left -= n;
        }
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  @Override
  public void close() throws IOException {
    acceptor.close();
  }
}
