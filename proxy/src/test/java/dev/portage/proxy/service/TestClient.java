package dev.portage.proxy.service;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A blocking client of the proxy; every read gives up after 10 s so a broken proxy fails the test. */
final class TestClient implements AutoCloseable {

  private final Socket socket;
  private final InputStream in;

  private TestClient(Socket socket) throws IOException {
    this.socket = socket;
    socket.setSoTimeout(10_000);
    this.in = socket.getInputStream();
  }

  static TestClient connect(InetSocketAddress proxy) throws IOException {
    return connectFrom("127.0.0.1", proxy);
  }

  /** A client whose source address is {@code localIp} (any 127.0.0.0/8 address works on loopback). */
  static TestClient connectFrom(String localIp, InetSocketAddress proxy) throws IOException {
    Socket s = new Socket();
    try {
      s.bind(new InetSocketAddress(localIp, 0));
      s.connect(proxy, 10_000);
      return new TestClient(s);
    } catch (IOException e) {
      s.close();
      throw e;
    }
  }

  /** Connects, reads the backend's greeting and closes: which backend served the connection. */
  static String greeting(InetSocketAddress proxy) throws IOException {
    try (TestClient c = connect(proxy)) {
      return c.readLine();
    }
  }

  /** One line without its newline, or null at end of stream. */
  String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b; (b = in.read()) != '\n'; ) {
      if (b < 0) {
        return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
      }
      line.write(b);
    }
    return line.toString(StandardCharsets.UTF_8);
  }

  /** Sends {@code text} and reads back its echo. */
  String echo(String text) throws IOException {
    socket.getOutputStream().write((text + "\n").getBytes(StandardCharsets.UTF_8));
    socket.getOutputStream().flush();
    return readLine();
  }

  /** Whether the proxy closed the connection (end of stream or reset) before sending anything more. */
  boolean closedByPeer() throws IOException {
    try {
      return in.read() < 0;
    } catch (java.net.SocketException e) {
      return true; // reset
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
