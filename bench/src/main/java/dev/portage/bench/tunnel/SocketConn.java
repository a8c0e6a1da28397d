package dev.portage.bench.tunnel;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A {@link Conn} over one TCP socket: direct, through {@code ssh -L}, or after an HTTP CONNECT. */
final class SocketConn implements Conn {
  private static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private SocketConn(Socket socket) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
    this.out = new BufferedOutputStream(socket.getOutputStream(), 4 * 1024);
  }

  static SocketConn connect(int port) throws IOException {
    Socket s = new Socket();
    try {
      s.setTcpNoDelay(true);
      s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      s.setSoTimeout(120_000);
      return new SocketConn(s);
    } catch (IOException e) {
      s.close();
      throw e;
    }
  }

  /** Connects to an HTTP CONNECT proxy and opens a tunnel to {@code target}. */
  static SocketConn httpConnect(int proxyPort, String target) throws IOException {
    return tunnel(connect(proxyPort), target);
  }

  /**
   * Asks the HTTP CONNECT proxy at the other end of {@code c} (plain or TLS) for a tunnel to {@code
   * target}; returns {@code c}, now carrying the tunnel's bytes, or closes it and throws.
   */
  static <C extends Conn> C tunnel(C c, String target) throws IOException {
    try {
      OutputStream out = c.out();
      out.write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      InputStream in = c.in();
      while (head.size() < 4096 && !head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          break;
        }
        head.write(b);
      }
      String answer = head.toString(StandardCharsets.ISO_8859_1);
      if (!answer.equals(ESTABLISHED)) {
        throw new IOException("CONNECT " + target + " answered: " + answer.strip());
      }
      return c;
    } catch (IOException e) {
      c.close();
      throw e;
    }
  }

  @Override
  public InputStream in() {
    return in;
  }

  @Override
  public OutputStream out() {
    return out;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
