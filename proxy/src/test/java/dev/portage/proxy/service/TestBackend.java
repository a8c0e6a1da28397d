package dev.portage.proxy.service;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A TCP backend on 127.0.0.1:0 that greets each connection with its name and a newline, then echoes. */
final class TestBackend implements AutoCloseable {

  final String name;
  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger accepted = new AtomicInteger();

  private TestBackend(String name) throws IOException {
    this.name = name;
    this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().name("backend-" + name).start(this::acceptLoop);
  }

  static TestBackend start(String name) throws IOException {
    return new TestBackend(name);
  }

  /** {@code 127.0.0.1:port}, as the endpoints file and endpoint ids write it. */
  String endpoint() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  int accepted() {
    return accepted.get();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (IOException e) {
        return;
      }
      accepted.incrementAndGet();
      open.add(socket);
      Thread.ofVirtual().start(() -> serve(socket));
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      OutputStream out = socket.getOutputStream();
      out.write((name + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // the client or the test went away
    } finally {
      open.remove(socket);
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : open) {
      s.close();
    }
  }
}
