package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.DefaultHeaders;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * What {@link PlainHead} costs per head, in thread CPU time and bytes allocated: an nginx response
 * head (with its 1 KiB body behind it, as the origin's read leaves it) and a curl request head,
 * parsed from a direct buffer on a connection where every head repeats; what a parsed head then
 * costs to {@code copy()} its headers (as the sidecar does per attempt of a request with a body) and
 * to encode (initial line and header lines through Portage's encoders, into a reused buffer); then,
 * for the evaluation of cheaper header storage, the same eight response headers added to headers from a few factories
 * (Netty's checks of names and values, as PlainHead's factory; no value check; pre-sized; values
 * known to be checked already skipped by identity) and the two ways to tell a remembered value from
 * the bytes (char by char against the String, or {@code Arrays.equals} against kept bytes). One
 * JVM, cases interleaved round after round, medians printed: run it against two builds to compare
 * them. Usage: {@code java -cp bench/target/benchmarks.jar dev.portage.core.http.PlainHeadCpuTime
 * [opsPerRound [rounds]]}.
 */
public final class PlainHeadCpuTime {

  static final String NGINX_HEAD = "HTTP/1.1 200 OK\r\n"
      + "Server: nginx/1.22.1\r\n"
      + "Date: Fri, 27 Nov 2026 05:30:00 GMT\r\n"
      + "Content-Type: text/html\r\n"
      + "Content-Length: 1024\r\n"
      + "Last-Modified: Tue, 24 Nov 2026 10:12:01 GMT\r\n"
      + "Connection: keep-alive\r\n"
      + "ETag: \"6566f1e1-400\"\r\n"
      + "Accept-Ranges: bytes\r\n"
      + "\r\n";

  static final String CURL_HEAD = "GET /index.html HTTP/1.1\r\n"
      + "Host: bench.default.svc.cluster.local:8080\r\n"
      + "User-Agent: curl/8.5.0\r\n"
      + "Accept: */*\r\n"
      + "\r\n";

  private PlainHeadCpuTime() {}

  /** Runs every case and prints one line each. */
  public static void main(String[] args) throws Exception {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 11;
    List<String> names = new ArrayList<>();
    List<IntSupplier> runs = new ArrayList<>();

    ByteBuf response = direct(NGINX_HEAD + "x".repeat(1024));
    PlainHead responses = new PlainHead();
    names.add("parseResponse");
    runs.add(() -> {
      response.readerIndex(0);
      return responses.parseResponse(response).headers().size();
    });
    ByteBuf request = direct(CURL_HEAD);
    PlainHead requests = new PlainHead();
    names.add("parseRequest");
    runs.add(() -> {
      request.readerIndex(0);
      return requests.parseRequest(request).headers().size();
    });

    ByteBuf once = direct(NGINX_HEAD);
    HttpResponse nginx = parsed(responses.parseResponse(once));
    once.release();
    once = direct(CURL_HEAD);
    HttpRequest curl = parsed(requests.parseRequest(once));
    once.release();
    names.add("copy response");
    runs.add(() -> nginx.headers().copy().size());
    names.add("copy request");
    runs.add(() -> curl.headers().copy().size());
    ByteBuf out = ByteBufAllocator.DEFAULT.directBuffer(1024);
    ResponseHooks responseEncoder = new ResponseHooks();
    RequestHooks requestEncoder = new RequestHooks();
    names.add("encode response");
    runs.add(() -> responseEncoder.head(out, nginx));
    // The same head in Netty's headers (same name and value objects): the storage's share.
    HttpResponse nginxNetty = new DefaultHttpResponse(nginx.protocolVersion(), nginx.status(),
        DefaultHttpHeadersFactory.headersFactory().withNameValidation(false).newHeaders());
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = nginx.headers().iteratorCharSequence();
        it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      nginxNetty.headers().add(e.getKey(), e.getValue());
    }
    names.add("encode resp netty");
    runs.add(() -> responseEncoder.head(out, nginxNetty));
    names.add("encode request");
    runs.add(() -> requestEncoder.head(out, curl));

    AsciiString[] headerNames = new AsciiString[8];
    String[] headerValues = new String[8];
    String[] lines = NGINX_HEAD.split("\r\n");
    for (int i = 0; i < 8; i++) {
      int colon = lines[i + 1].indexOf(':');
      headerNames[i] = new AsciiString(lines[i + 1].substring(0, colon));
      headerValues[i] = lines[i + 1].substring(colon + 2);
    }
    DefaultHttpHeadersFactory checked =
        DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);
    DefaultHeaders.ValueValidator<CharSequence> valueCheck = checked.getValueValidator();
    String[] trusted = new String[1];
    HttpHeadersFactory identity = checked.withValueValidator(v -> {
      if (v != trusted[0]) {
        valueCheck.validate(v);
      }
    });
    HttpHeadersFactory unchecked = checked.withValueValidation(false);
    names.add("headers checked");
    runs.add(() -> fill(checked.newHeaders(), headerNames, headerValues, null));
    names.add("headers unchecked");
    runs.add(() -> fill(unchecked.newHeaders(), headerNames, headerValues, null));
    names.add("headers presized8");
    runs.add(() -> fill(new Presized(valueCheck, 8), headerNames, headerValues, null));
    names.add("headers identity");
    runs.add(() -> fill(identity.newHeaders(), headerNames, headerValues, trusted));

    byte[] wire = NGINX_HEAD.getBytes(StandardCharsets.ISO_8859_1);
    int[] starts = new int[8];
    byte[][] kept = new byte[8][];
    int from = 0;
    for (int i = 0; i < 8; i++) {
      from = NGINX_HEAD.indexOf(": ", NGINX_HEAD.indexOf("\r\n", from) + 2) + 2;
      starts[i] = from;
      kept[i] = headerValues[i].getBytes(StandardCharsets.ISO_8859_1);
    }
    names.add("compare chars");
    runs.add(() -> {
      int same = 0;
      for (int i = 0; i < 8; i++) {
        if (PlainHead.sameBytes(headerValues[i], wire, starts[i], kept[i].length)) {
          same++;
        }
      }
      return same;
    });
    names.add("compare bytes");
    runs.add(() -> {
      int same = 0;
      for (int i = 0; i < 8; i++) {
        int n = kept[i].length;
        if (Arrays.equals(kept[i], 0, n, wire, starts[i], starts[i] + n)) {
          same++;
        }
      }
      return same;
    });

    CpuTimeCases.run(names, runs, ops, rounds);
    response.release();
    request.release();
    out.release();
  }

  private static <T> T parsed(T message) {
    if (message == null) {
      throw new IllegalStateException("head not parsed");
    }
    return message;
  }

  /** Portage's encoders' head hooks (protected), reachable from subclasses in this package. */
  private static final class ResponseHooks extends Http1ResponseEncoder {
    /** Writes {@code m}'s initial line and headers into the cleared {@code out}; its length. */
    int head(ByteBuf out, HttpResponse m) {
      out.clear();
      encodeInitialLine(out, m);
      encodeHeaders(m.headers(), out);
      return out.writerIndex();
    }
  }

  private static final class RequestHooks extends Http1RequestEncoder {
    int head(ByteBuf out, HttpRequest m) {
      out.clear();
      encodeInitialLine(out, m);
      encodeHeaders(m.headers(), out);
      return out.writerIndex();
    }
  }

  static ByteBuf direct(String text) {
    byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
    return ByteBufAllocator.DEFAULT.directBuffer(b.length).writeBytes(b);
  }

  private static int fill(HttpHeaders h, AsciiString[] names, String[] values, String[] trusted) {
    for (int i = 0; i < names.length; i++) {
      if (trusted != null) {
        trusted[0] = values[i];
      }
      h.add(names[i], values[i]);
    }
    return h.size();
  }


  /** Netty's headers with a smaller hash table than its default 16 buckets. */
  private static final class Presized extends DefaultHttpHeaders {
    Presized(DefaultHeaders.ValueValidator<CharSequence> values, int buckets) {
      super(DefaultHeaders.NameValidator.NOT_NULL, values, buckets);
    }
  }
}
