package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The pooled connections' HTTP/1.1 codec, on Netty's embedded channel. */
class OriginHttpCodecTest {

  private final EmbeddedChannel ch = new EmbeddedChannel(new OriginHttpCodec());

  @AfterEach
  void close() {
    ch.finishAndReleaseAll();
  }

  private void send(HttpMethod method) {
    assertThat(ch.writeOutbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, "/x"))).isTrue();
    ByteBuf wire;
    while ((wire = ch.readOutbound()) != null) {
      wire.release();
    }
  }

  private void receive(String text) {
    ch.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1));
  }

  /** Everything decoded so far: the head, then each content's text, "LAST" for the last one. */
  private List<Object> decoded() {
    List<Object> out = new ArrayList<>();
    Object msg;
    while ((msg = ch.readInbound()) != null) {
      if (msg instanceof HttpResponse r) {
        out.add(r);
      }
      if (msg instanceof HttpContent c) {
        if (c.content().isReadable()) {
          out.add(c.content().toString(StandardCharsets.ISO_8859_1));
        }
        if (c instanceof LastHttpContent) {
          out.add("LAST");
        }
      }
      if (msg instanceof ByteBuf b) {
        out.add("raw:" + b.toString(StandardCharsets.ISO_8859_1));
      }
      ReferenceCountUtil.release(msg);
    }
    return out;
  }

  @Test
  void commonNamesAreSharedAndEveryNameKeepsTheBytesTheOriginSent() {
    send(HttpMethod.GET);
    receive("HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Thu, 26 Nov 2026 13:00:00 GMT\r\n"
        + "content-type: text/plain\r\nContent-LENGTH: 2\r\nX-Custom: a\r\n\r\nhi");
    List<Object> out = decoded();
    HttpResponse head = (HttpResponse) out.get(0);
    assertThat(out.subList(1, out.size())).containsExactly("hi", "LAST");
    assertThat(head.status().code()).isEqualTo(200);
    assertThat(head.status().reasonPhrase()).isEqualTo("OK");
    assertThat(head.protocolVersion()).isEqualTo(HttpVersion.HTTP_1_1);
    List<CharSequence> names = new ArrayList<>();
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = head.headers().iteratorCharSequence(); it.hasNext(); ) {
      names.add(it.next().getKey());
    }
    assertThat(names).extracting(CharSequence::toString)
        .containsExactly("Server", "Date", "content-type", "Content-LENGTH", "X-Custom");
    // The common spellings are the process-wide constants (no allocation per header line).
    assertThat((Object) names.get(0)).isSameAs(CommonHeaderNames.find(bytes("Server"), 0, 6));
    assertThat((Object) names.get(2)).isSameAs(CommonHeaderNames.find(bytes("content-type"), 0, 12));
    assertThat((Object) CommonHeaderNames.find(bytes("Content-LENGTH"), 0, 14)).isNull();
    assertThat(head.headers().get("content-length")).isEqualTo("2");
  }

  @Test
  void aResponseToHeadHasNoBodyAndTheNextResponseIsReadFromTheRightPlace() {
    send(HttpMethod.HEAD);
    send(HttpMethod.GET);
    receive("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
        + "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnop");
    List<Object> out = decoded();
    assertThat(out).hasSize(5);
    assertThat(((HttpResponse) out.get(0)).status().code()).isEqualTo(200);
    assertThat(out.get(1)).isEqualTo("LAST");
    assertThat(((HttpResponse) out.get(2)).status().code()).isEqualTo(404);
    assertThat(out.subList(3, 5)).containsExactly("nop", "LAST");
  }

  @Test
  void anInformationalResponseDoesNotUseUpTheRequestItPrecedes() {
    send(HttpMethod.HEAD);
    receive("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
    List<Object> out = decoded();
    assertThat(out).hasSize(4);
    assertThat(((HttpResponse) out.get(0)).status().code()).isEqualTo(100);
    assertThat(((HttpResponse) out.get(2)).status().code()).isEqualTo(200);
    assertThat(out.get(3)).isEqualTo("LAST"); // the HEAD's answer: no body despite its length
  }

  @Test
  void aTwoHundredToConnectTurnsTheConnectionIntoRawBytesBothWays() {
    send(HttpMethod.CONNECT);
    receive("HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0");
    List<Object> out = decoded();
    assertThat(((HttpResponse) out.get(0)).status().code()).isEqualTo(200);
    assertThat(out).contains("raw:SSH-2.0");
    assertThat(ch.writeOutbound(Unpooled.copiedBuffer("client bytes", StandardCharsets.US_ASCII))).isTrue();
    ByteBuf sent = ch.readOutbound();
    assertThat(sent.toString(StandardCharsets.US_ASCII)).isEqualTo("client bytes");
    sent.release();
  }

  @Test
  void afterASwitchingProtocolsAnswerTheBytesPassThroughUnparsed() {
    send(HttpMethod.GET);
    receive("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\u0081\u0002hi");
    List<Object> out = decoded();
    assertThat(((HttpResponse) out.get(0)).status().code()).isEqualTo(101);
    assertThat(out.get(out.size() - 1)).isEqualTo("raw:\u0081\u0002hi");
  }

  @Test
  void aMalformedHeadIsADecoderFailureAsBefore() {
    send(HttpMethod.GET);
    receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi");
    Object msg = ch.readInbound();
    assertThat(msg).isInstanceOf(HttpResponse.class);
    assertThat(((HttpResponse) msg).decoderResult().isFailure()).isTrue();
    ReferenceCountUtil.release(msg);
  }

  private static byte[] bytes(String s) {
    return new AsciiString(s).toByteArray();
  }

  /** What a codec decodes from {@code chunks} after requests with {@code methods}, as text. */
  private static List<String> decodeAll(List<HttpMethod> methods, boolean direct, String... chunks) {
    return decodeAll(new OriginHttpCodec(), methods, direct, chunks);
  }

  private static List<String> decodeAll(
      io.netty.channel.ChannelHandler codec, List<HttpMethod> methods, boolean direct, String... chunks) {
    EmbeddedChannel c = new EmbeddedChannel(codec);
    List<String> seen = new ArrayList<>();
    try {
      for (HttpMethod m : methods) {
        c.writeOutbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, m, "/x"));
        ByteBuf wire;
        while ((wire = c.readOutbound()) != null) {
          wire.release();
        }
      }
      for (String chunk : chunks) {
        byte[] b = bytes(chunk);
        ByteBuf buf = direct ? Unpooled.directBuffer(b.length) : Unpooled.buffer(b.length);
        c.writeInbound(buf.writeBytes(b));
        Object msg;
        while ((msg = c.readInbound()) != null) {
          StringBuilder d = new StringBuilder();
          if (msg instanceof HttpResponse r) {
            d.append(r.protocolVersion()).append(' ').append(r.status().code()).append(' ')
                .append(r.status().reasonPhrase());
            r.headers().iteratorCharSequence().forEachRemaining(e -> d.append(" [").append(e.getKey()).append('=')
                .append(e.getValue()).append(']'));
          }
          if (msg instanceof FullHttpResponse) {
            // One message where Netty's decoder emits two: described as those two.
            seen.add(d.append(" ok").toString());
            d.setLength(0);
          }
          if (msg instanceof HttpContent hc) {
            d.append(msg instanceof LastHttpContent ? "last " : "content ")
                .append(hc.content().toString(StandardCharsets.ISO_8859_1));
            if (msg instanceof LastHttpContent l) {
              d.append(" trailers ").append(l.trailingHeaders().size());
            }
          }
          if (msg instanceof io.netty.handler.codec.http.HttpObject h) {
            d.append(h.decoderResult().isSuccess() ? " ok" : " failed");
          }
          seen.add(d.toString());
          ReferenceCountUtil.release(msg);
        }
      }
    } finally {
      c.finishAndReleaseAll();
    }
    return seen;
  }

  @Test
  void wholeResponsesDecodeAsTheSameResponsesArrivingByteByByte() {
    String nginx = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Fri, 27 Nov 2026 02:00:00 GMT\r\n"
        + "Content-Type: text/html\r\nContent-Length: 5\r\nLast-Modified: Fri, 27 Nov 2026 01:00:00 GMT\r\n"
        + "Connection: keep-alive\r\nETag: \"6566-5\"\r\nAccept-Ranges: bytes\r\nX-Odd:  a \t\r\n\r\nhello";
    String notFound = "HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nnop";
    String custom = "HTTP/1.0 299 Fine Thanks\r\nContent-Length: 0\r\n\r\n";
    String chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-T: 1\r\n\r\n";
    String noContent = "HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\n";
    String big = "HTTP/1.1 200 OK\r\nContent-Length: 9000\r\n\r\n" + "z".repeat(9000);
    String head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    String all = nginx + notFound + custom + chunked + noContent + big + head + nginx;
    List<HttpMethod> methods = List.of(HttpMethod.GET, HttpMethod.GET, HttpMethod.POST, HttpMethod.GET,
        HttpMethod.GET, HttpMethod.GET, HttpMethod.HEAD, HttpMethod.GET);
    // Netty's own client codec is the reference (same method pairing for these responses).
    List<String> whole = decodeAll(methods, false, all);
    assertThat(whole).isEqualTo(decodeAll(new HttpClientCodec(), methods, false, all));
    assertThat(decodeAll(methods, true, all)).isEqualTo(whole);
    assertThat(decodeAll(methods, true, all.split("")))
        .isEqualTo(decodeAll(new HttpClientCodec(), methods, false, all.split("")));
    for (int i = 1; i < all.length(); i += 7) {
      String[] split = {all.substring(0, i), all.substring(i)};
      assertThat(decodeAll(methods, i % 2 == 0, split))
          .isEqualTo(decodeAll(new HttpClientCodec(), methods, false, split));
    }
    assertThat(whole.get(0)).startsWith("HTTP/1.1 200 OK [Server=nginx/1.22.1]").contains("[X-Odd=a]");
    assertThat(whole.get(1)).isEqualTo("last hello trailers 0 ok");
    assertThat(whole.get(2)).isEqualTo("HTTP/1.1 404 Not Found [content-length=3] ok");
    assertThat(whole.get(4)).isEqualTo("HTTP/1.0 299 Fine Thanks [Content-Length=0] ok");
  }

  @Test
  void headsThatRepeatAllButAByteDecodeAsNettyDecodesThem() {
    // On one connection the parser hands out the previous head's values when the bytes repeat:
    // a value changed in one byte, in length, or moved to another position must be seen.
    String a = "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Fri, 27 Nov 2026 02:00:00 GMT\r\n"
        + "ETag: \"ab\"\r\nContent-Length: 1\r\n\r\nx";
    String sameLength = a.replace("02:00:00", "02:00:01").replace("\"ab\"", "\"ac\"");
    String longer = a.replace("\"ab\"", "\"abc\"");
    String moved = "HTTP/1.1 200 OK\r\nDate: Fri, 27 Nov 2026 02:00:00 GMT\r\nServer: nginx\r\n"
        + "Content-Length: 1\r\n\r\ny";
    String empty = "HTTP/1.1 200 OK\r\nServer: \r\nContent-Length: 0\r\n\r\n";
    String all = a + sameLength + longer + a + moved + empty + a;
    List<HttpMethod> methods = java.util.Collections.nCopies(7, HttpMethod.GET);
    List<String> decoded = decodeAll(methods, true, all);
    assertThat(decoded).isEqualTo(decodeAll(new HttpClientCodec(), methods, false, all));
    assertThat(decoded.get(2)).contains("[Date=Fri, 27 Nov 2026 02:00:01 GMT]", "[ETag=\"ac\"]");
    assertThat(decoded.get(4)).contains("[ETag=\"abc\"]");

    // A line that starts with the previous line's bytes and then goes on.
    String trailing = a.replace("Server: nginx\r\n", "Server: nginx\t \r\n");
    String longerName = a.replace("ETag:", "ETags:");
    String continued = a.replace("nginx\r\n", "nginx nginx\r\n");
    String more = a + trailing + a + longerName + a + continued + a;
    List<HttpMethod> seven = java.util.Collections.nCopies(7, HttpMethod.GET);
    List<String> again = decodeAll(seven, true, more);
    assertThat(again).isEqualTo(decodeAll(new HttpClientCodec(), seven, false, more));
    assertThat(again.get(2)).contains("[Server=nginx]");
    assertThat(again.get(10)).contains("[Server=nginx nginx]");
  }

  @Test
  void aRepeatedHeaderBlockDecodesAsNettyDecodesIt() {
    // A whole header block that repeats the last one parsed gets its names, values and body length
    // back, whatever the status line; a head that fails late, after its first lines replaced
    // them, must not leave them to the next repeat.
    String block = "Server: nginx\r\nETag: \"ab\"\r\nContent-Length: 2\r\n\r\n";
    String a = "HTTP/1.1 200 OK\r\n" + block + "hi";
    String notFound = "HTTP/1.0 404 Not Found\r\n" + block + "no";
    String failsLate = "HTTP/1.1 200 OK\r\nServer: other\r\nETag: \"cd\"\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    String all = a + a + notFound + failsLate + a + a;
    List<HttpMethod> methods = java.util.Collections.nCopies(6, HttpMethod.GET);
    List<String> decoded = decodeAll(methods, true, all);
    assertThat(decoded).isEqualTo(decodeAll(new HttpClientCodec(), methods, false, all));
    assertThat(decoded.get(4)).startsWith("HTTP/1.0 404 Not Found [Server=nginx]");
    assertThat(decoded.get(5)).isEqualTo("last no trailers 0 ok");
    assertThat(decoded.get(decoded.size() - 4)).contains("[Server=nginx]", "[ETag=\"ab\"]");
  }

  @Test
  void aWholeResponseSharesItsHeadersNamesAndEmptyTrailers() {
    send(HttpMethod.GET);
    send(HttpMethod.GET);
    String response = "HTTP/1.1 200 OK\r\nServer: nginx\r\nX-Custom: same\r\nContent-Length: 2\r\n\r\nhi";
    receive(response + response);
    List<FullHttpResponse> heads = new ArrayList<>();
    Object msg;
    while ((msg = ch.readInbound()) != null) {
      heads.add((FullHttpResponse) msg); // head and body in one message
    }
    List<LastHttpContent> lasts = List.copyOf(heads);
    try {
      assertThat(heads).hasSize(2);
      assertThat(heads.get(0).content().toString(StandardCharsets.ISO_8859_1)).isEqualTo("hi");
      assertThat(heads.get(0).status()).isSameAs(io.netty.handler.codec.http.HttpResponseStatus.OK);
      // The second response reuses the first one's value and custom name objects.
      assertThat(heads.get(1).headers().get("X-Custom")).isSameAs(heads.get(0).headers().get("X-Custom"));
      assertThat(lasts).hasSize(2);
      assertThat(lasts.get(0).trailingHeaders()).isSameAs(lasts.get(1).trailingHeaders()).isEmpty();
    } finally {
      lasts.forEach(ReferenceCountUtil::release);
    }
  }
}
