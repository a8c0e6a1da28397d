package dev.portage.tunnel.interop;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A plain-socket HTTP CONNECT client: sends the request, reads the response head byte by byte (so
 * no tunneled byte is consumed), then exposes the socket for raw bytes. Reads time out after 10 s.
 */
final class ConnectSocket implements AutoCloseable {
  final Socket socket;
  final String head;

  private ConnectSocket(Socket socket, String head) {
    this.socket = socket;
    this.head = head;
  }

  static ConnectSocket open(int proxyPort, String target) throws IOException {
    Socket s = new Socket();
    try {
      s.setSoTimeout(10_000);
      s.connect(new InetSocketAddress("127.0.0.1", proxyPort), 10_000);
      s.getOutputStream().write(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      int b;
      while ((b = in.read()) >= 0) {
        head.write(b);
        byte[] h = head.toByteArray();
        int n = h.length;
        if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
          break;
        }
      }
      return new ConnectSocket(s, head.toString(StandardCharsets.US_ASCII));
    } catch (IOException e) {
      s.close();
      throw e;
    }
  }

  String statusLine() {
    int i = head.indexOf("\r\n");
    return i < 0 ? head : head.substring(0, i);
  }

  /** Everything after the head until the server closes the socket (an error body). */
  String readToEnd() throws IOException {
    return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  InputStream in() throws IOException {
    return socket.getInputStream();
  }

  OutputStream out() throws IOException {
    return socket.getOutputStream();
  }

  /**
   * Writes {@code data} from a virtual thread while reading the same number of bytes back (an echo
   * backend behind the tunnel), and returns what came back.
   */
  byte[] echo(byte[] data) throws Exception {
    Thread writer = Thread.ofVirtual().start(() -> {
      try {
        out().write(data);
        out().flush();
      } catch (IOException e) {
        // the read side reports the short echo
      }
    });
    byte[] back = in().readNBytes(data.length);
    writer.join(10_000);
    return back;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
