package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The listener's HTTP/1.1 codec against Netty's {@code HttpServerCodec}: the same bytes, split the
 * same ways, must decode to the same objects, and the same responses must encode to the same bytes.
 */
class ServerHttpCodecTest {

  private static final String WRK_GET =
      "GET /index.html HTTP/1.1\r\nHost: bench.default.svc.cluster.local:8080\r\n\r\n";

  private static final String CURL_GET =
      "GET /a/b?c=d&e=%20f HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.5.0\r\n"
          + "Accept: */*\r\nX-Empty:\r\nX-Spaces: \t a  b \t\r\nConnection: keep-alive\r\n\r\n";

  /** Every HTTP object decoded from {@code chunks}, as text, then any exception the channel raised. */
  private static List<String> decode(Supplier<ChannelHandler> codec, boolean direct, String... chunks) {
    EmbeddedChannel ch = new EmbeddedChannel(codec.get());
    List<String> seen = new ArrayList<>();
    try {
      for (String chunk : chunks) {
        byte[] bytes = chunk.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuf buf = direct ? Unpooled.directBuffer(bytes.length) : Unpooled.buffer(bytes.length);
        buf.writeBytes(bytes);
        try {
          ch.writeInbound(buf);
        } catch (RuntimeException e) {
          seen.add("exception " + e.getClass().getSimpleName() + " " + rootMessage(e));
        }
        drain(ch, seen);
      }
      try {
        ch.finish();
      } catch (RuntimeException e) {
        seen.add("exception at close " + e.getClass().getSimpleName());
      }
      drain(ch, seen);
    } finally {
      ch.finishAndReleaseAll();
    }
    return seen;
  }

  private static String rootMessage(Throwable e) {
    while (e.getCause() != null) {
      e = e.getCause();
    }
    return e.getMessage();
  }

  private static void drain(EmbeddedChannel ch, List<String> seen) {
    Object msg;
    while ((msg = ch.readInbound()) != null) {
      seen.add(describe(msg));
      ReferenceCountUtil.release(msg);
    }
  }

  private static String describe(Object msg) {
    StringBuilder s = new StringBuilder();
    if (msg instanceof HttpRequest r) {
      s.append("request ").append(r.method()).append(' ').append(r.uri()).append(' ').append(r.protocolVersion());
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = r.headers().iteratorCharSequence(); it.hasNext(); ) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        s.append(" [").append(e.getKey()).append("=").append(e.getValue()).append(']');
      }
    }
    if (msg instanceof HttpContent c) {
      s.append(msg instanceof LastHttpContent ? "last " : "content ")
          .append(c.content().toString(StandardCharsets.ISO_8859_1));
      if (msg instanceof LastHttpContent l) {
        l.trailingHeaders().forEach(e -> s.append(" trailer [").append(e.getKey()).append('=').append(e.getValue()).append(']'));
      }
    }
    if (msg instanceof HttpObject h) {
      DecoderResult r = h.decoderResult();
      s.append(r.isSuccess() ? " ok" : r.isFailure() ? " failed " + r.cause().getClass().getSimpleName() : " unfinished");
    } else {
      s.append("other ").append(msg);
    }
    return s.toString();
  }

  /** The same bytes, whole, split at every position and byte by byte, heap and direct. */
  private static void assertSameAsNetty(String input) {
    List<String> expected = decode(HttpServerCodec::new, false, input);
    assertThat(decode(ServerHttpCodec::new, false, input)).as("whole").isEqualTo(expected);
    assertThat(decode(ServerHttpCodec::new, true, input)).as("whole, direct").isEqualTo(expected);
    for (int i = 1; i < input.length(); i++) {
      String[] split = {input.substring(0, i), input.substring(i)};
      assertThat(decode(ServerHttpCodec::new, i % 2 == 0, split))
          .as("split at %d", i)
          .isEqualTo(decode(HttpServerCodec::new, false, split));
    }
    String[] bytes = input.split("");
    assertThat(decode(ServerHttpCodec::new, true, bytes)).as("byte by byte")
        .isEqualTo(decode(HttpServerCodec::new, false, bytes));
  }

  @Test
  void plainRequestsDecodeAsNettyDecodesThem() {
    List<String> decoded = decode(ServerHttpCodec::new, false, WRK_GET);
    assertThat(decoded).containsExactly(
        "request GET /index.html HTTP/1.1 [Host=bench.default.svc.cluster.local:8080] ok", "last  ok");
    assertSameAsNetty(WRK_GET);
    assertSameAsNetty(CURL_GET);
    assertSameAsNetty("HEAD / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n");
    assertSameAsNetty("DELETE http://a.example:80/x HTTP/1.1\r\nHost: a.example\r\n\r\n");
    assertSameAsNetty("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nX-Obs: caf\u00e9\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nhost: a\r\ncontent-length: 0\r\n\r\n");
    assertSameAsNetty("GET /{a}|\"<b>\\^`~ HTTP/1.1\r\nHost: a\r\nX-Q: \"q\" {v}\r\n\r\n");
    assertSameAsNetty("PATCH HTTPS://A.example/x HTTP/1.1\r\nHost: A.example\r\nX:y\r\n\r\n");
  }

  @Test
  void requestsThatRepeatAllButAByteDecodeAsNettyDecodesThem() {
    // The parser hands out the previous request's target and values when the bytes repeat.
    String a = "GET /a HTTP/1.1\r\nHost: h\r\nX-Id: 0001\r\nAuthorization: Bearer t0k\r\n\r\n";
    String b = a.replace("/a", "/b").replace("0001", "0002");
    String c = a.replace("/a", "/ab").replace("t0k", "t0ken");
    String d = "GET /a HTTP/1.1\r\nX-Id: 0001\r\nHost: h\r\n\r\n";
    assertSameAsNetty(a + b + c + a + d + a);
    // A line that starts with the previous line's bytes and then goes on: trailing spaces and tabs
    // after a repeated value, a longer name, a value that continues, a control byte, a space
    // before the colon (the last two are Netty's verdict).
    String trailing = a.replace("Host: h\r\n", "Host: h \t\r\n");
    String longerName = a.replace("X-Id:", "X-Idx:");
    String continued = a.replace("t0k\r\n", "t0k t0k\r\n");
    assertSameAsNetty(a + trailing + a + longerName + a + continued + a);
    assertSameAsNetty(a + a.replace("0001", "0001\u0001") + a);
    assertSameAsNetty(a + a.replace("Host:", "Host :"));
  }

  @Test
  void aRepeatedHeaderBlockAfterAHeadLeftToNettyDecodesAsNettyDecodesIt() {
    // A whole header block that repeats the last one parsed gets its names and values back. A head
    // that fails late, after its first lines replaced them, must not leave them to the next repeat.
    String a = "GET /a HTTP/1.1\r\nHost: h\r\nX-Id: 0001\r\nAuthorization: Bearer t0k\r\n\r\n";
    String failsLate =
        "GET /a HTTP/1.1\r\nHost: other\r\nX-Id: 0002\r\nContent-Length: 3\r\n\r\nabc";
    assertSameAsNetty(a + a + failsLate + a + a);
    assertSameAsNetty(a + a.replace("GET /a HTTP/1.1", "HEAD /b HTTP/1.0") + a);
    List<String> decoded = decode(ServerHttpCodec::new, true, a + failsLate + a);
    assertThat(decoded.get(decoded.size() - 2))
        .contains("[Host=h]", "[X-Id=0001]", "[Authorization=Bearer t0k]");
  }

  @Test
  void pipelinedRequestsDecodeInOrder() {
    assertSameAsNetty(WRK_GET + "HEAD /h HTTP/1.1\r\nHost: a\r\n\r\n" + CURL_GET);
    assertThat(decode(ServerHttpCodec::new, true, WRK_GET + WRK_GET + WRK_GET)).hasSize(6);
  }

  @Test
  void bodiesAndChunkedRequestsGoThroughNettysDecoder() {
    assertSameAsNetty("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + WRK_GET);
    assertSameAsNetty("PUT /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n" + WRK_GET);
    assertSameAsNetty("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "1\r\nx\r\n0\r\n\r\n");
    assertSameAsNetty("GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    assertSameAsNetty("\r\n\r\n" + WRK_GET);
  }

  @Test
  void malformedInputGetsNettysVerdict() {
    assertSameAsNetty("GET  / HTTP/1.1\r\nHost: a\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.2\r\nHost: a\r\n\r\n" + WRK_GET);
    assertSameAsNetty("GET / HTTP/1.1\nHost: a\n\n");
    assertSameAsNetty("G@T / HTTP/1.1\r\nHost: a\r\n\r\n");
    assertSameAsNetty("get / HTTP/1.1\r\nHost: a\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nHost : a\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nBad\u0001Name: a\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nX: a\u0001b\r\n\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n");
    assertSameAsNetty("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\nx");
    assertSameAsNetty("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    assertSameAsNetty("GET / HTTP/1.1\r\nHost: a\r\n"); // closed before the head ended
  }

  @Test
  void oversizedHeadsAreRefusedAsNettyRefusesThem() {
    String longLine = "GET /" + "x".repeat(5000) + " HTTP/1.1\r\nHost: a\r\n\r\n";
    String bigHeaders = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + "y".repeat(9000) + "\r\n\r\n";
    String nearLimit = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + "y".repeat(8150) + "\r\n\r\n";
    for (String input : List.of(longLine, bigHeaders, nearLimit)) {
      List<String> expected = decode(HttpServerCodec::new, false, input);
      assertThat(decode(ServerHttpCodec::new, false, input)).isEqualTo(expected);
      assertThat(decode(ServerHttpCodec::new, true, input.substring(0, 3000), input.substring(3000)))
          .isEqualTo(decode(HttpServerCodec::new, false, input.substring(0, 3000), input.substring(3000)));
    }
    assertThat(decode(ServerHttpCodec::new, false, longLine).get(0)).contains("failed TooLongHttpLineException");
    assertThat(decode(ServerHttpCodec::new, false, bigHeaders).get(0)).contains("failed TooLongHttpHeaderException");
  }

  @Test
  void tooManyUnansweredRequestsAreRefusedAsNettyRefusesThem() {
    String input = WRK_GET.repeat(ServerHttpCodec.MAX_PIPELINE_DEPTH + 2);
    List<String> ours = decode(ServerHttpCodec::new, false, input, WRK_GET);
    assertThat(ours).isEqualTo(decode(HttpServerCodec::new, false, input, WRK_GET));
    assertThat(ours).anyMatch(s -> s.contains("maxPipelineDepth exceeded"));
  }

  /** The bytes each codec writes for the responses to the requests in {@code input}. */
  private static String encode(Supplier<ChannelHandler> codec, String input, Object... responses) {
    EmbeddedChannel ch = new EmbeddedChannel(codec.get());
    try {
      ch.writeInbound(Unpooled.copiedBuffer(input, StandardCharsets.ISO_8859_1));
      Object in;
      while ((in = ch.readInbound()) != null) {
        ReferenceCountUtil.release(in);
      }
      StringBuilder out = new StringBuilder();
      for (Object r : responses) {
        ch.writeOutbound(r); // handed over: the encoder releases it
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
          out.append(b.toString(StandardCharsets.ISO_8859_1));
          b.release();
        }
      }
      out.append(ch.isOpen() ? "" : "<closed>");
      return out.toString();
    } finally {
      ch.finishAndReleaseAll();
    }
  }

  private static DefaultFullHttpResponse ok(String body) {
    DefaultFullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
        Unpooled.copiedBuffer(body, StandardCharsets.ISO_8859_1));
    r.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length());
    return r;
  }

  /** Both codecs write the same bytes for fresh copies of the same responses. */
  private static void assertSameBytes(String input, Supplier<Object[]> responses) {
    String expected = encode(HttpServerCodec::new, input, responses.get());
    assertThat(encode(ServerHttpCodec::new, input, responses.get())).isEqualTo(expected);
  }


  @Test
  void theAnswerToHeadHasNoBodyAndPipelinedAnswersKeepTheirOrder() {
    String input = WRK_GET + "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n" + WRK_GET;
    Supplier<Object[]> responses = () -> new Object[] {ok("one"), ok("two"), ok("three")};
    String ours = encode(ServerHttpCodec::new, input, responses.get());
    assertThat(ours).contains("one").doesNotContain("two").contains("three");
    assertSameBytes(input, responses);
  }

  @Test
  void aContinueDoesNotUseUpTheRequestItAnswers() {
    String input = "HEAD / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n" + WRK_GET;
    Supplier<Object[]> responses = () -> new Object[] {
      new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE), ok("head"), ok("get")
    };
    String ours = encode(ServerHttpCodec::new, input, responses.get());
    assertThat(ours).startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
        .doesNotContain("head").endsWith("get");
    assertSameBytes(input, responses);
  }

  @Test
  void aTwoHundredToConnectCarriesNoTransferEncoding() {
    Supplier<Object[]> established = () -> {
      DefaultHttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
      return new Object[] {r};
    };
    String connect = "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n";
    assertThat(encode(ServerHttpCodec::new, connect, established.get())).isEqualTo("HTTP/1.1 200 OK\r\n\r\n");
    assertSameBytes(connect, established);
  }

  @Test
  void theAnswerToAChunkedRequestWithALengthIsWrittenAsNettyWritesIt() {
    String input = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    assertSameBytes(input, () -> new Object[] {ok("x")});
  }

  @Test
  void theKeepAliveHandlerClosesAfterAnHttp10AnswerOnTop() {
    EmbeddedChannel ch = new EmbeddedChannel(new ServerHttpCodec(), new HttpServerKeepAliveHandler());
    try {
      ch.writeInbound(Unpooled.copiedBuffer("GET / HTTP/1.0\r\nHost: a\r\n\r\n", StandardCharsets.ISO_8859_1));
      Object in;
      while ((in = ch.readInbound()) != null) {
        ReferenceCountUtil.release(in);
      }
      ch.writeOutbound(ok("bye"));
      ByteBuf b;
      while ((b = ch.readOutbound()) != null) {
        b.release();
      }
      assertThat(ch.isOpen()).isFalse();
    } finally {
      ch.finishAndReleaseAll();
    }
  }
}
