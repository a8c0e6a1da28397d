package dev.portage.bench.tunnel;

import java.io.Closeable;
import java.io.InputStream;
import java.io.OutputStream;

/** One byte stream to the bench backend, however it is carried (direct, tunnel, ssh). One user thread. */
interface Conn extends Closeable {
  InputStream in();

  OutputStream out();
}
