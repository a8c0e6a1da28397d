package dev.portage.proxy.mesh;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal blocking HTTP/1.1 client over a plain socket, for tests that need full control of the
 * headers (Host, hop-by-hop) and of when each byte is written and read.
 */
final class RawHttp {

  record Response(int status, Map<String, List<String>> headers, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    String header(String name) {
      List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
      return v == null ? null : v.get(0);
    }
  }

  private RawHttp() {}

  /** One request on a fresh connection ({@code Connection: close}). */
  static Response send(InetSocketAddress proxy, String method, String authority, String path, String... headers)
      throws IOException {
    return send(proxy, method, authority, path, null, headers);
  }

  /** {@link #send} on another thread, for requests that wait on a fake clock. */
  static java.util.concurrent.CompletableFuture<Response> sendAsync(
      InetSocketAddress proxy, String method, String authority, String path, byte[] body, String... headers) {
    return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return send(proxy, method, authority, path, body, headers);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }

  static Response send(
      InetSocketAddress proxy, String method, String authority, String path, byte[] body, String... headers)
      throws IOException {
    try (Socket s = new Socket(proxy.getAddress(), proxy.getPort())) {
      s.setSoTimeout(20_000);
      StringBuilder head = new StringBuilder();
      head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
      head.append("Host: ").append(authority).append("\r\n");
      boolean connection = false;
      for (String h : headers) {
        head.append(h).append("\r\n");
        connection |= h.toLowerCase(Locale.ROOT).startsWith("connection:");
      }
      if (!connection) {
        head.append("Connection: close\r\n");
      }
      if (body != null) {
        head.append("Content-Length: ").append(body.length).append("\r\n");
      }
      head.append("\r\n");
      OutputStream out = s.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      return read(s.getInputStream());
    }
  }

  /** Reads one response: status line, headers, body by length, chunks or until close. */
  static Response read(InputStream in) throws IOException {
    String status = line(in);
    if (status == null) {
      throw new IOException("connection closed before a response");
    }
    int code = Integer.parseInt(status.split(" ")[1]);
    Map<String, List<String>> headers = new LinkedHashMap<>();
    String l;
    while ((l = line(in)) != null && !l.isEmpty()) {
      int c = l.indexOf(':');
      headers.computeIfAbsent(l.substring(0, c).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
          .add(l.substring(c + 1).trim());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    List<String> te = headers.get("transfer-encoding");
    List<String> cl = headers.get("content-length");
    if (te != null && te.get(0).equalsIgnoreCase("chunked")) {
      while (true) {
        int size = Integer.parseInt(line(in).split(";")[0].trim(), 16);
        if (size == 0) {
          while ((l = line(in)) != null && !l.isEmpty()) {
            // trailers
          }
          break;
        }
        body.write(in.readNBytes(size));
        line(in);
      }
    } else if (cl != null) {
      body.write(in.readNBytes(Integer.parseInt(cl.get(0))));
    } else if (code != 204 && code != 304) {
      body.write(in.readAllBytes());
    }
    return new Response(code, headers, body.toByteArray());
  }

  /** One CRLF-terminated line, or null at end of stream. */
  static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1) {
      if (c == '\n') {
        byte[] bytes = b.toByteArray();
        int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
      }
      b.write(c);
    }
    return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
  }
}
