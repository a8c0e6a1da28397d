package dev.portage.core.http;

import dev.portage.core.net.ScratchBytes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * Writes the initial line and header lines of an HTTP/1.x message the way Netty's encoders write
 * them, byte for byte, but through a per-thread byte array with plain stores and then one {@code
 * writeBytes} into the output buffer. Netty writes every name, separator, value and line end into
 * the (direct) buffer separately, each with its own bounds and capacity checks (a JFR profile of
 * the sidecar at 50 connections had its encoder at 11.7 % of samples, these writes prominent in
 * it). Measured in thread CPU time, the head of a typical nginx response costs about a quarter of
 * Netty's, a curl request's about a third (HeadEncodingCpuTime in the benchmarks).
 *
 * <p>Driven from the two hooks of Netty's {@code HttpObjectEncoder}: {@link #lineOf} from {@code
 * encodeInitialLine} only remembers the message, because Netty sanitizes the headers after the line
 * and before {@code encodeHeaders}; {@link #writeHeaders} then writes line and headers together.
 * Netty writes the blank line that ends the head itself. The same hook also writes the trailers of
 * a chunked message; then there is no line to write. What Netty writes:
 *
 * <ul>
 *   <li>a name or value that is an {@link AsciiString}: its bytes; any other char sequence: each
 *       char below 256 as that byte, any other char as {@code '?'} (its US-ASCII path);
 *   <li>a response line: version, space, status code, space, reason phrase, CRLF;
 *   <li>a request line: method, space, the target in UTF-8 ({@code /} for an empty one, and a
 *       {@code /} added to an absolute-form target that has no path), space, version, CRLF.
 * </ul>
 *
 * A piece too large for the array, and a target that is not plain ASCII, are handed to Netty's own
 * buffer writes after what is buffered so far, so the output stays the same. One per encoder;
 * confined to the channel's event loop (the array is per thread and never held across calls).
 */
final class HeadWriter {

  /** Larger than nearly every head; larger ones are written in several pieces. */
  static final int SCRATCH_SIZE = 4096;

  private static final ScratchBytes SCRATCH = new ScratchBytes(SCRATCH_SIZE);

  private static final byte[] HTTP_1_1_200_OK =
      "HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII);

  /** The message whose initial line is owed to {@link #pendingBuf}, or null. */
  private HttpMessage pending;

  private ByteBuf pendingBuf;

  /** Where the line goes in {@link #pendingBuf} (a trailer buffer never matches both). */
  private int pendingIndex;

  // The state of one writeHeaders call; the array is dropped when it returns.
  private byte[] a;
  private int pos;
  private ByteBuf out;

  /**
   * Appends {@code length} bytes of {@code from} at {@code index} to {@code to}, through the
   * per-thread array: a buffer-to-buffer copy between Netty's adaptive buffers goes through a new
   * NIO view of each (two objects per copy, about 120 bytes per relayed response), a copy to and
   * from an array through neither.
   */
  static void copy(ByteBuf from, int index, int length, ByteBuf to) {
    byte[] a = SCRATCH.get();
    for (int done = 0; done < length; ) {
      int n = Math.min(a.length, length - done);
      from.getBytes(index + done, a, 0, n);
      to.writeBytes(a, 0, n);
      done += n;
    }
  }

  /** Remembers that {@code message}'s initial line is to be written at the end of {@code buf}. */
  void lineOf(ByteBuf buf, HttpMessage message) {
    pending = message;
    pendingBuf = buf;
    pendingIndex = buf.writerIndex();
  }

  /**
   * Writes the initial line remembered for {@code buf} (if any) and one line per header, in the
   * headers' iteration order, onto {@code buf}.
   */
  void writeHeaders(HttpHeaders headers, ByteBuf buf) {
    HttpMessage message = null;
    if (pending != null) {
      if (pendingBuf == buf && pendingIndex == buf.writerIndex()) {
        message = pending;
      }
      pending = null;
      pendingBuf = null;
    }
    a = SCRATCH.get();
    pos = 0;
    out = buf;
    try {
      if (message instanceof HttpResponse response) {
        responseLine(response);
      } else if (message instanceof HttpRequest request) {
        requestLine(request);
      }
      if (headers instanceof ParsedHeaders parsed) {
        parsedLines(parsed);
      } else {
        Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
        while (it.hasNext()) {
          Map.Entry<CharSequence, CharSequence> header = it.next();
          header(header.getKey(), header.getValue());
        }
      }
      flush();
    } finally {
      a = null;
      out = null;
    }
  }

  /**
   * The lines of headers a parse built: their written form when they still equal it (a repeated
   * block passed on as parsed or only stripped), else by index (no iterator, no entry object).
   */
  private void parsedLines(ParsedHeaders parsed) {
    byte[] wire = parsed.wireBytes();
    if (wire != null) {
      bytes(wire);
      return;
    }
    for (int i = 0, n = parsed.size(); i < n; i++) {
      CharSequence value = parsed.valueAt(i);
      if (parsed.latin1At(i)) {
        latin1Header(parsed.nameAt(i), (String) value);
      } else {
        header(parsed.nameAt(i), value);
      }
    }
  }

  private void responseLine(HttpResponse response) {
    HttpVersion version = response.protocolVersion();
    HttpResponseStatus status = response.status();
    if (version == HttpVersion.HTTP_1_1 && status == HttpResponseStatus.OK) {
      System.arraycopy(HTTP_1_1_200_OK, 0, a, 0, HTTP_1_1_200_OK.length);
      pos = HTTP_1_1_200_OK.length;
      return;
    }
    text(version.text());
    space();
    text(status.codeAsText());
    space();
    text(status.reasonPhrase());
    crlf();
  }

  private void requestLine(HttpRequest request) {
    text(request.method().asciiName());
    space();
    String uri = request.uri();
    if (uri.isEmpty()) {
      put((byte) '/');
    } else {
      // Netty's encoder completes an absolute-form target without a path: http://host?q is sent as
      // http://host/?q and http://host as http://host/.
      int slashAt = -1;
      int hostStart = uri.indexOf("://");
      if (hostStart != -1 && uri.charAt(0) != '/') {
        hostStart += 3;
        int query = uri.indexOf('?', hostStart);
        if (query == -1) {
          if (uri.lastIndexOf('/') < hostStart) {
            slashAt = uri.length();
          }
        } else if (uri.lastIndexOf('/', query) < hostStart) {
          slashAt = query;
        }
      }
      if (slashAt < 0) {
        target(uri);
      } else {
        target(new StringBuilder(uri.length() + 1)
            .append(uri, 0, slashAt)
            .append('/')
            .append(uri, slashAt, uri.length())
            .toString());
      }
    }
    space();
    text(request.protocolVersion().text());
    crlf();
  }

  /** A request target, which Netty writes in UTF-8: plain ASCII here, the rest through Netty. */
  private void target(String uri) {
    int n = uri.length();
    if (n > a.length - pos) {
      flush();
      if (n > a.length) {
        out.writeCharSequence(uri, StandardCharsets.UTF_8);
        return;
      }
    }
    byte[] dst = a;
    int p = pos;
    for (int i = 0; i < n; i++) {
      char c = uri.charAt(i);
      if (c >= 0x80) {
        flush(); // what is buffered before the target; the target's bytes so far are dropped
        out.writeCharSequence(uri, StandardCharsets.UTF_8);
        return;
      }
      dst[p + i] = (byte) c;
    }
    pos = p + n;
  }

  /** A name, value or word of a line, as Netty's US-ASCII writes store it. */
  /** One header line: name, colon and space, value, CRLF. */
  private void header(CharSequence name, CharSequence value) {
    text(name);
    put((byte) ':', (byte) ' ');
    text(value);
    crlf();
  }

  /** A header line whose value is a String of chars below 256 only: copied as bytes in one go. */
  private void latin1Header(CharSequence name, String latin1Value) {
    text(name);
    put((byte) ':', (byte) ' ');
    int n = latin1Value.length();
    if (n > a.length - pos) {
      text(latin1Value);
    } else {
      latin1(latin1Value, n);
    }
    crlf();
  }

  // The deprecated getBytes takes each char's low byte, which for chars below 256 is the byte
  // Netty writes; for a String stored as Latin-1 it is one array copy.
  @SuppressWarnings("deprecation")
  private void latin1(String s, int n) {
    s.getBytes(0, n, a, pos);
    pos += n;
  }

  private void text(CharSequence s) {
    int n = s.length();
    if (n > a.length - pos) {
      flush();
      if (n > a.length) {
        if (s instanceof AsciiString ascii) {
          ByteBufUtil.copy(ascii, out);
        } else {
          out.writeCharSequence(s, StandardCharsets.US_ASCII);
        }
        return;
      }
    }
    byte[] dst = a;
    int p = pos;
    if (s instanceof AsciiString ascii) {
      System.arraycopy(ascii.array(), ascii.arrayOffset(), dst, p, n);
    } else if (s instanceof String string) {
      for (int i = 0; i < n; i++) {
        dst[p + i] = AsciiString.c2b(string.charAt(i));
      }
    } else {
      for (int i = 0; i < n; i++) {
        dst[p + i] = AsciiString.c2b(s.charAt(i));
      }
    }
    pos = p + n;
  }

  /** Bytes already in the written form: copied as they are. */
  private void bytes(byte[] b) {
    int n = b.length;
    if (n > a.length - pos) {
      flush();
      if (n > a.length) {
        out.writeBytes(b);
        return;
      }
    }
    System.arraycopy(b, 0, a, pos, n);
    pos += n;
  }

  private void space() {
    put((byte) ' ');
  }

  private void crlf() {
    put((byte) '\r', (byte) '\n');
  }

  private void put(byte b) {
    if (pos + 1 > a.length) {
      flush();
    }
    a[pos++] = b;
  }

  private void put(byte b1, byte b2) {
    if (pos + 2 > a.length) {
      flush();
    }
    a[pos] = b1;
    a[pos + 1] = b2;
    pos += 2;
  }

  /** Moves what is buffered into the output. */
  private void flush() {
    if (pos > 0) {
      out.writeBytes(a, 0, pos);
      pos = 0;
    }
  }
}
