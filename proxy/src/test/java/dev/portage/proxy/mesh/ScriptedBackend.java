package dev.portage.proxy.mesh;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A raw HTTP/1.1 backend over plain sockets that answers every request with bytes the test
 * scripts (trailers, trailers-only gRPC answers, anything the JDK server cannot send), and records
 * every complete request it read (head and body, as text). Keep-alive: serves a connection until it
 * closes.
 */
final class ScriptedBackend implements AutoCloseable {

  final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
  final List<String> requests = new CopyOnWriteArrayList<>();
  /** Connections accepted and request heads read, complete requests or not. */
  final AtomicInteger connections = new AtomicInteger();
  final AtomicInteger heads = new AtomicInteger();
  volatile Supplier<String> response;
  private final List<Socket> open = new CopyOnWriteArrayList<>();

  ScriptedBackend(Supplier<String> response) throws IOException {
    this.response = response;
    Thread.ofPlatform().daemon().start(this::acceptLoop);
  }

  int port() {
    return socket.getLocalPort();
  }

  /** 200 with a chunked body and the given trailer lines (e.g. {@code grpc-status: 14}). */
  static String chunkedWithTrailers(String body, String... trailers) {
    StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\ncontent-type: application/grpc\r\ntransfer-encoding: chunked\r\n\r\n");
    if (!body.isEmpty()) {
      b.append(Integer.toHexString(body.length())).append("\r\n").append(body).append("\r\n");
    }
    b.append("0\r\n");
    for (String t : trailers) {
      b.append(t).append("\r\n");
    }
    return b.append("\r\n").toString();
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket s = socket.accept();
        connections.incrementAndGet();
        open.add(s);
        Thread.ofPlatform().daemon().start(() -> serve(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        String request = readRequest(in);
        if (request == null) {
          return;
        }
        requests.add(request);
        out.write(response.get().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
      }
    } catch (IOException e) {
      // the proxy went away mid-request: not a complete request, nothing recorded
    } finally {
      open.remove(s);
    }
  }

  /** One whole request (head and body by Content-Length or chunks), or null at end of stream. */
  private String readRequest(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    String line = RawHttp.line(in);
    if (line == null) {
      return null;
    }
    long length = 0;
    boolean chunked = false;
    while (line != null && !line.isEmpty()) {
      head.append(line).append("\r\n");
      String l = line.toLowerCase(Locale.ROOT);
      if (l.startsWith("content-length:")) {
        length = Long.parseLong(l.substring(15).trim());
      } else if (l.startsWith("transfer-encoding:") && l.contains("chunked")) {
        chunked = true;
      }
      line = RawHttp.line(in);
    }
    if (line == null) {
      throw new IOException("connection closed in a request head");
    }
    heads.incrementAndGet();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      while (true) {
        String size = RawHttp.line(in);
        if (size == null) {
          throw new IOException("connection closed in a chunked body");
        }
        int n = Integer.parseInt(size.split(";")[0].trim(), 16);
        if (n == 0) {
          String t;
          while ((t = RawHttp.line(in)) != null && !t.isEmpty()) {
            // trailers
          }
          if (t == null) {
            throw new IOException("connection closed in the trailers");
          }
          break;
        }
        byte[] chunk = in.readNBytes(n);
        if (chunk.length < n || !"".equals(RawHttp.line(in))) {
          throw new IOException("connection closed in a chunk");
        }
        body.write(chunk);
      }
    } else {
      byte[] b = in.readNBytes((int) length);
      if (b.length < length) {
        throw new IOException("connection closed in a body");
      }
      body.write(b);
    }
    return head + "\r\n" + body.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
    for (Socket s : open) {
      s.close();
    }
  }
}
