package dev.portage.tunnel.agent;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback address whose connects hang: a listener that never accepts, with its accept queue
 * filled, so the kernel drops further SYNs (Linux, {@code tcp_abort_on_overflow=0}). Public for the
 * end-to-end tests.
 */
public final class Blackhole implements AutoCloseable {
  private final ServerSocket listener;
  private final List<Socket> fillers = new ArrayList<>();

  public Blackhole() throws IOException {
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
    for (int i = 0; i < 16; i++) {
      Socket s = new Socket();
      fillers.add(s);
      try {
        s.connect(listener.getLocalSocketAddress(), 300);
      } catch (SocketTimeoutException full) {
        return;
      }
    }
    throw new IllegalStateException("could not fill the accept queue of " + listener);
  }

  public String address() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    for (Socket s : fillers) {
      s.close();
    }
    listener.close();
  }
}
