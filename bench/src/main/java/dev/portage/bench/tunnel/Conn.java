package dev.portage.bench.tunnel;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** One byte stream to the bench backend, however it is carried (direct, tunnel, ssh). One user thread. */
interface Conn extends Closeable {
  InputStream in();

  OutputStream out();

  /**
   * Reads and discards everything up to the end of the stream; returns how many bytes that was. The
   * socket routes read into one array (the kernel-to-user copy every client makes); a route whose bytes
   * already arrive in user-space messages may count them without a copy.
   */
  default long drain() throws IOException {
    InputStream in = in();
    byte[] buf = new byte[256 * 1024];
    long got = 0;
    for (int n; (n = in.read(buf)) >= 0; ) {
      got += n;
    }
    return got;
  }
}
