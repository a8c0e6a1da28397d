package dev.portage.tunnel.e2e;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A plain-socket HTTP CONNECT client: sends the request head, reads the response head byte by byte
 * (so no tunneled byte is consumed), then exposes the raw streams. Reads time out after 30 s.
 */
final class ConnectClient implements AutoCloseable {
  static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";

  final Socket socket;

  private ConnectClient(Socket socket) {
    this.socket = socket;
  }

  /** Connects to the proxy without sending anything. */
  static ConnectClient to(int proxyPort) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", proxyPort), 10_000);
    s.setSoTimeout(30_000);
    s.setTcpNoDelay(true);
    return new ConnectClient(s);
  }

  /** Connects and requires {@code 200 Connection Established} for {@code target}. */
  static ConnectClient tunnel(int proxyPort, String target) throws IOException {
    ConnectClient c = to(proxyPort);
    String head = c.request("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
    if (!head.equals(ESTABLISHED)) {
      c.close();
      throw new IOException("CONNECT " + target + " answered " + head);
    }
    return c;
  }

  /** Writes {@code head} and returns the response head (through the blank line). */
  String request(String head) throws IOException {
    write(head.getBytes(StandardCharsets.ISO_8859_1));
    return readHead();
  }

  String readHead() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    InputStream in = socket.getInputStream();
    while (!out.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      out.write(b);
    }
    return out.toString(StandardCharsets.ISO_8859_1);
  }

  void write(byte[] bytes) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(bytes);
    out.flush();
  }

  byte[] read(int n) throws IOException {
    byte[] b = socket.getInputStream().readNBytes(n);
    if (b.length < n) {
      throw new IOException("EOF after " + b.length + " of " + n + " bytes");
    }
    return b;
  }

  /** Everything up to EOF. */
  byte[] readToEof() throws IOException {
    return socket.getInputStream().readAllBytes();
  }

  String readToEofText() throws IOException {
    return new String(readToEof(), StandardCharsets.ISO_8859_1);
  }

  InputStream in() throws IOException {
    return socket.getInputStream();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
