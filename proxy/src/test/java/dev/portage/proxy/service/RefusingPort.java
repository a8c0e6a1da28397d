package dev.portage.proxy.service;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A loopback port that refuses connections for as long as this is open: a socket bound to it that
 * never listens. The port stays taken, so no listener started meanwhile can get it. A port bound and
 * released again could go to the proxy's own service listener (also on port 0), and the proxy would
 * then dial itself, each dial a new client, until the process runs out of file descriptors.
 */
final class RefusingPort implements AutoCloseable {

  private final Socket socket = new Socket();

  RefusingPort() throws IOException {
    try {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  int port() {
    return socket.getLocalPort();
  }

  /** {@code 127.0.0.1:port}, as the endpoints file and endpoint ids write it. */
  String endpoint() {
    return "127.0.0.1:" + port();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
