package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The encoders that write heads through {@link HeadWriter} against Netty's plain encoders: the same
 * generated messages (built twice from one seed, since an encoder consumes what it is given) must
 * come out as the same bytes in the same buffers.
 */
class Http1EncoderDifferentialTest {

  /** No validation, so values may carry what a relayed head may carry: any char at all. */
  private static final HttpHeadersFactory RAW =
      DefaultHttpHeadersFactory.headersFactory().withValidation(false);

  private static final AsciiString[] ASCII_NAMES = {
    HttpHeaderNames.SERVER, HttpHeaderNames.DATE, HttpHeaderNames.CONTENT_TYPE,
    HttpHeaderNames.ETAG, HttpHeaderNames.LAST_MODIFIED, HttpHeaderNames.ACCEPT_RANGES,
    HttpHeaderNames.CONNECTION, HttpHeaderNames.VIA, AsciiString.cached("X-Request-Id"),
  };

  private static final String[] STRING_NAMES = {"Server", "x-trace", "Cache-Control", "X-Ünicode"};

  private static final String[] ODD_CHARS = {
    "é", "ÿ", "\u0100", "✓", "\uD83D\uDE00", "\uD800", "\t", "\u0001", "\u007f", "\u0080", " ",
  };

  private static final int CASES = 400;

  /**
   * Direct buffers without leak tracking for the generated cases: under the tests' paranoid leak
   * detection every one of Netty's per-byte writes records a stack trace, which made 800 cases take
   * minutes. The encoders allocate the same way either way; the fixed cases below use the default
   * (tracked) allocator.
   */
  private static final ByteBufAllocator UNTRACKED = new UnpooledByteBufAllocator(true, true);

  /** The first few generated cases run on tracked buffers too. */
  private static ByteBufAllocator allocator(long seed) {
    return seed < 10 ? ByteBufAllocator.DEFAULT : UNTRACKED;
  }

  private static List<String> encode(ChannelHandler encoder, List<Object> messages) {
    return encode(encoder, messages, ByteBufAllocator.DEFAULT);
  }

  /** The messages encoded by the handler; the outbound buffers as hex, one string each. */
  private static List<String> encode(
      ChannelHandler encoder, List<Object> messages, ByteBufAllocator alloc) {
    List<String> wire = new ArrayList<>();
    encodeEach(encoder, messages, alloc).forEach(wire::addAll);
    return wire;
  }

  /** Per message written, the outbound buffers it made, as hex. */
  private static List<List<String>> encodeEach(
      ChannelHandler encoder, List<Object> messages, ByteBufAllocator alloc) {
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(alloc);
    ch.pipeline().addLast(encoder);
    List<List<String>> wire = new ArrayList<>();
    try {
      for (Object message : messages) {
        ch.writeOutbound(message);
        List<String> buffers = new ArrayList<>();
        Object out;
        while ((out = ch.readOutbound()) != null) {
          ByteBuf buf = (ByteBuf) out;
          try {
            buffers.add(ByteBufUtil.hexDump(buf));
          } finally {
            buf.release();
          }
        }
        wire.add(buffers);
      }
    } finally {
      ch.finishAndReleaseAll();
    }
    return wire;
  }

  /**
   * The same bytes for every message, in the same buffers, except that a whole response our
   * encoder writes in one piece ({@link #writtenWhole}) is one buffer where Netty's may be two.
   */
  private static void assertSame(
      String what, Supplier<ChannelHandler> ours, Supplier<ChannelHandler> netty,
      Function<Random, List<Object>> messages, long seed, ByteBufAllocator alloc) {
    List<List<String>> expected = encodeEach(netty.get(), messages.apply(new Random(seed)), alloc);
    List<Object> mine = messages.apply(new Random(seed));
    List<Boolean> whole = mine.stream().map(Http1EncoderDifferentialTest::writtenWhole).toList();
    List<List<String>> actual = encodeEach(ours.get(), mine, alloc);
    assertThat(actual).as("%s, seed %d: messages", what, seed).hasSameSizeAs(expected);
    for (int i = 0; i < actual.size(); i++) {
      assertThat(String.join("", actual.get(i)))
          .as("%s, seed %d, message %d: the bytes", what, seed, i)
          .isEqualTo(String.join("", expected.get(i)));
      if (whole.get(i)) {
        assertThat(actual.get(i)).as("%s, seed %d, message %d: one buffer", what, seed, i).hasSize(1);
      } else {
        assertThat(actual.get(i)).as("%s, seed %d, message %d: the buffers", what, seed, i)
            .isEqualTo(expected.get(i));
      }
    }
  }

  /** Whether our response encoder writes this message as one buffer (a small, unchunked whole). */
  private static boolean writtenWhole(Object message) {
    return message instanceof FullHttpResponse f
        && f.content().readableBytes() <= Http1ResponseEncoder.WHOLE_BODY_LIMIT
        && !HttpUtil.isTransferEncodingChunked(f);
  }

  private static String text(Random r, int max) {
    int n = r.nextInt(max + 1);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      if (r.nextInt(12) == 0) {
        b.append(ODD_CHARS[r.nextInt(ODD_CHARS.length)]);
      } else {
        b.append((char) (' ' + r.nextInt(95)));
      }
    }
    return b.toString();
  }

  private static String longValue(Random r) {
    int n = HeadWriter.SCRATCH_SIZE + r.nextInt(HeadWriter.SCRATCH_SIZE * 2);
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) ('a' + r.nextInt(26)));
    }
    if (r.nextBoolean()) {
      b.setCharAt(r.nextInt(n), '✓');
    }
    return b.toString();
  }

  /** 0 to 40 headers (see {@link #plainHeaders}), half of them as a parse hands them over. */
  private static HttpHeaders headers(Random r) {
    HttpHeaders h = plainHeaders(r);
    return r.nextBoolean() ? parsed(h) : h;
  }

  /** 0 to 40 headers: constant and String names, String and AsciiString values, odd chars. */
  private static HttpHeaders plainHeaders(Random r) {
    HttpHeaders h = RAW.newHeaders();
    int count = r.nextInt(41);
    for (int i = 0; i < count; i++) {
      CharSequence name = r.nextBoolean()
          ? ASCII_NAMES[r.nextInt(ASCII_NAMES.length)]
          : STRING_NAMES[r.nextInt(STRING_NAMES.length)];
      int kind = r.nextInt(20);
      CharSequence value;
      if (kind == 0) {
        value = longValue(r);
      } else if (kind < 6) {
        value = new AsciiString(text(r, 40).getBytes(StandardCharsets.ISO_8859_1));
      } else if (kind == 6) {
        value = new StringBuilder(text(r, 30));
      } else {
        value = text(r, 60);
      }
      h.add(name, value);
    }
    if (r.nextInt(25) == 0) {
      h.add(longValue(r), "long name");
    }
    return h;
  }

  /**
   * Parsed headers over the same name and value objects as one of {@code pool}'s, as a keep-alive
   * connection's repeated heads are; some with one header dropped, or one value replaced by an
   * equal copy or by another value, as a relay's edits do.
   */
  private static HttpHeaders repeated(Random r, List<HttpHeaders> pool) {
    HttpHeaders h = parsed(pool.get(r.nextInt(pool.size())));
    List<CharSequence> names = new ArrayList<>(h.names());
    if (names.isEmpty()) {
      return h;
    }
    CharSequence name = names.get(r.nextInt(names.size()));
    String value = h.get(name);
    boolean plain = value.chars().allMatch(c -> c > ' ' && c < 0x7f); // what set() accepts
    switch (r.nextInt(8)) {
      case 0 -> h.remove(name);
      case 1 -> h.set(name, plain ? new String(value) : "copy"); // equal, not the same object
      case 2 -> h.set(name, "v" + r.nextInt(100));
      default -> { }
    }
    return h;
  }

  private static List<HttpHeaders> pool(Random r) {
    return List.of(plainHeaders(r), plainHeaders(r), plainHeaders(r));
  }

  /** Bodiless responses and requests whose headers repeat each other's objects ({@link #repeated}). */
  private static List<Object> repeatedHeads(Random r, boolean responses) {
    List<HttpHeaders> pool = pool(r);
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      HttpHeaders headers = repeated(r, pool);
      out.add(responses
          ? new DefaultFullHttpResponse(version(r), status(r), Unpooled.EMPTY_BUFFER, headers,
              RAW.newHeaders())
          : new DefaultFullHttpRequest(version(r), METHODS[r.nextInt(2)], uri(r),
              Unpooled.EMPTY_BUFFER, headers, RAW.newHeaders()));
    }
    return out;
  }

  /** The same headers as a parse hands them over ({@link ParsedHeaders}, written by index). */
  private static HttpHeaders parsed(HttpHeaders h) {
    CharSequence[] kv = new CharSequence[2 * h.size()];
    int hopByHop = 0;
    int tokens = 0;
    int i = 0;
    long latin1 = 0; // the values a parse could have made: Strings of chars below 256
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      if (i / 2 < 64 && e.getValue() instanceof String v && v.chars().allMatch(c -> c < 256)) {
        latin1 |= 1L << (i / 2);
      }
      kv[i++] = e.getKey();
      kv[i++] = e.getValue();
      int bit = HopByHopHeaders.bitOf(e.getKey());
      hopByHop |= bit;
      if (bit == HopByHopHeaders.CONNECTION_BIT) {
        tokens |= ParsedHeaders.tokens(e.getValue());
      }
    }
    return new ParsedHeaders(kv, h.size(), hopByHop, tokens, -1, latin1);
  }

  private static HttpVersion version(Random r) {
    return switch (r.nextInt(6)) {
      case 0 -> HttpVersion.HTTP_1_0;
      case 1 -> new HttpVersion("HTTP", 1, 1, true); // equal, not the constant
      default -> HttpVersion.HTTP_1_1;
    };
  }

  private static HttpResponseStatus status(Random r) {
    return switch (r.nextInt(10)) {
      case 0 -> HttpResponseStatus.NO_CONTENT;
      case 1 -> HttpResponseStatus.NOT_MODIFIED;
      case 2 -> HttpResponseStatus.NOT_FOUND;
      case 3 -> HttpResponseStatus.valueOf(200, "Fine");
      case 4 -> new HttpResponseStatus(299, text(r, 20));
      case 5 -> HttpResponseStatus.valueOf(503);
      default -> HttpResponseStatus.OK;
    };
  }

  private static ByteBuf body(Random r) {
    int n = switch (r.nextInt(40)) {
      case 0 -> Http1ResponseEncoder.WHOLE_BODY_LIMIT + r.nextInt(2); // at and past the copy limit
      case 1, 2, 3, 4, 5, 6, 7, 8, 9 -> 0;
      default -> r.nextInt(1200); // past Netty's own copy threshold too
    };
    byte[] bytes = new byte[n];
    r.nextBytes(bytes);
    return Unpooled.wrappedBuffer(bytes);
  }

  private static List<Object> responses(Random r) {
    List<Object> out = new ArrayList<>();
    int count = 1 + r.nextInt(3);
    for (int i = 0; i < count; i++) {
      HttpVersion version = version(r);
      if (r.nextInt(8) == 0) {
        out.add(new DefaultFullHttpResponse(
            version, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER, RAW.newHeaders(),
            RAW.newEmptyHeaders()));
      }
      HttpResponseStatus status = status(r);
      HttpHeaders headers = headers(r);
      switch (r.nextInt(4)) {
        case 0 -> {
          ByteBuf body = body(r);
          if (r.nextInt(5) > 0) {
            headers.set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
          }
          out.add(new DefaultFullHttpResponse(version, status, body, headers, RAW.newHeaders()));
        }
        case 3 -> { // whole but chunked: body and trailers as chunks
          headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
          out.add(new DefaultFullHttpResponse(version, status, body(r), headers, headers(r)));
        }
        case 1 -> {
          headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
          out.add(new DefaultHttpResponse(version, status, headers));
          contents(r, out);
        }
        default -> {
          ByteBuf body = body(r);
          headers.set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
          out.add(new DefaultHttpResponse(version, status, headers));
          out.add(body.isReadable()
              ? new DefaultLastHttpContent(body)
              : LastHttpContent.EMPTY_LAST_CONTENT);
        }
      }
    }
    return out;
  }

  /** Some contents, then a last content with or without trailers (chunked framing only). */
  private static void contents(Random r, List<Object> out) {
    int n = r.nextInt(3);
    for (int i = 0; i < n; i++) {
      out.add(new DefaultHttpContent(body(r)));
    }
    if (r.nextBoolean()) {
      out.add(LastHttpContent.EMPTY_LAST_CONTENT);
    } else {
      out.add(new DefaultLastHttpContent(body(r), headers(r)));
    }
  }

  private static final String[] URIS = {
    "/", "", "*", "/index.html", "/a/b?c=d&e=%20f", "http://example.com", "http://example.com?q=1",
    "http://example.com/p?q=/", "https://h:8443", "http://h:80/", "/x://y", "/ü", "/a\uD800b",
    "/a\uD800\u00e9", "example.com:443", "/?a=✓",
  };

  private static final HttpMethod[] METHODS = {
    HttpMethod.GET, HttpMethod.POST, HttpMethod.HEAD, HttpMethod.PUT, HttpMethod.valueOf("PURGE"),
  };

  private static String uri(Random r) {
    if (r.nextInt(30) == 0) {
      return "/" + longValue(r);
    }
    return URIS[r.nextInt(URIS.length)];
  }

  private static List<Object> requests(Random r) {
    List<Object> out = new ArrayList<>();
    int count = 1 + r.nextInt(3);
    for (int i = 0; i < count; i++) {
      HttpVersion version = version(r);
      HttpMethod method = METHODS[r.nextInt(METHODS.length)];
      String uri = uri(r);
      HttpHeaders headers = headers(r);
      switch (r.nextInt(3)) {
        case 0 -> {
          ByteBuf body = body(r);
          if (body.isReadable() || r.nextBoolean()) {
            headers.set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
          }
          out.add(new DefaultFullHttpRequest(
              version, method, uri, body, headers, RAW.newHeaders()));
        }
        case 1 -> {
          headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
          out.add(new DefaultHttpRequest(version, method, uri, headers));
          contents(r, out);
        }
        default -> {
          out.add(new DefaultHttpRequest(version, method, uri, headers));
          out.add(LastHttpContent.EMPTY_LAST_CONTENT);
        }
      }
    }
    return out;
  }

  @Test
  void responsesEncodeAsNettyEncodesThem() {
    for (long seed = 0; seed < CASES; seed++) {
      assertSame("responses", Http1ResponseEncoder::new, HttpResponseEncoder::new,
          Http1EncoderDifferentialTest::responses, seed, allocator(seed));
    }
  }

  @Test
  void requestsEncodeAsNettyEncodesThem() {
    for (long seed = 0; seed < CASES; seed++) {
      assertSame("requests", Http1RequestEncoder::new, HttpRequestEncoder::new,
          Http1EncoderDifferentialTest::requests, seed, allocator(seed));
    }
  }

  @Test
  void headsThatRepeatEachOthersHeadersEncodeAsNettyEncodesThem() {
    // A keep-alive connection's heads: parsed headers sharing name and value objects.
    for (long seed = 0; seed < CASES / 8; seed++) {
      assertSame("repeated responses", Http1ResponseEncoder::new, HttpResponseEncoder::new,
          r -> repeatedHeads(r, true), seed, seed < 2 ? ByteBufAllocator.DEFAULT : UNTRACKED);
      assertSame("repeated requests", Http1RequestEncoder::new, HttpRequestEncoder::new,
          r -> repeatedHeads(r, false), seed, seed < 2 ? ByteBufAllocator.DEFAULT : UNTRACKED);
    }
  }

  @Test
  void aValueChangedInPlaceBetweenTwoHeadsIsWrittenAsItIsNow() {
    // Same objects, new content: what is written is what the value says now.
    StringBuilder changing = new StringBuilder("one");
    AsciiString server = AsciiString.cached("Server");
    List<String> ours = new ArrayList<>();
    List<String> netty = new ArrayList<>();
    for (Supplier<ChannelHandler> encoder :
        List.<Supplier<ChannelHandler>>of(Http1ResponseEncoder::new, HttpResponseEncoder::new)) {
      changing.replace(0, changing.length(), "one");
      EmbeddedChannel ch = new EmbeddedChannel(encoder.get());
      List<String> wire = ours.isEmpty() ? ours : netty;
      try {
        for (int i = 0; i < 2; i++) {
          HttpHeaders h = parsed(RAW.newHeaders().add(server, "nginx").add("X-Changing", changing));
          ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
              HttpResponseStatus.NO_CONTENT, Unpooled.EMPTY_BUFFER, h, RAW.newHeaders()));
          ByteBuf buf = ch.readOutbound();
          wire.add(buf.toString(StandardCharsets.ISO_8859_1));
          buf.release();
          changing.append("-two");
        }
      } finally {
        ch.finishAndReleaseAll();
      }
    }
    assertThat(ours).isEqualTo(netty);
    assertThat(ours.get(1)).contains("X-Changing: one-two\r\n");
  }

  @Test
  void everyTargetFormEncodesAsNettyEncodesIt() {
    for (String uri : URIS) {
      for (HttpMethod method : METHODS) {
        Function<Random, List<Object>> one = r -> List.of(new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_1, method, uri, Unpooled.EMPTY_BUFFER, RAW.newHeaders(),
            RAW.newHeaders()));
        assertSame("target " + uri, Http1RequestEncoder::new, HttpRequestEncoder::new, one, 0,
            ByteBufAllocator.DEFAULT);
      }
    }
  }

  @Test
  void aSmallFullResponseIsOneBufferOfHeadAndBody() {
    HttpHeaders headers = RAW.newHeaders()
        .add(HttpHeaderNames.SERVER, "nginx/1.22.1")
        .add(HttpHeaderNames.CONTENT_LENGTH, "5");
    ByteBuf body = Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII);
    List<String> wire = encode(new Http1ResponseEncoder(), List.of(new DefaultFullHttpResponse(
        HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body, headers, RAW.newHeaders())));
    assertThat(wire).hasSize(1);
    assertThat(new String(ByteBufUtil.decodeHexDump(wire.get(0)), StandardCharsets.US_ASCII))
        .isEqualTo("HTTP/1.1 200 OK\r\nserver: nginx/1.22.1\r\ncontent-length: 5\r\n\r\nhello");
  }

  @Test
  void aKibibyteBodyGoesOutWithItsHeadInOneBufferWhereNettyMakesTwo() {
    Function<Random, List<Object>> nginx = r -> {
      ByteBuf body = Unpooled.wrappedBuffer(new byte[1024]);
      HttpHeaders h = RAW.newHeaders().add(HttpHeaderNames.CONTENT_LENGTH, "1024");
      return List.of(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body, h,
          RAW.newHeaders()));
    };
    assertThat(encode(new HttpResponseEncoder(), nginx.apply(null))).hasSize(2);
    assertThat(encode(new Http1ResponseEncoder(), nginx.apply(null))).hasSize(1);
    assertSame("1 KiB", Http1ResponseEncoder::new, HttpResponseEncoder::new, nginx, 0, ByteBufAllocator.DEFAULT);
  }

  @Test
  void aWholeResponseInsideAnotherIsRefusedAsNettyRefusesIt() {
    for (Supplier<ChannelHandler> encoder :
        List.<Supplier<ChannelHandler>>of(Http1ResponseEncoder::new, HttpResponseEncoder::new)) {
      EmbeddedChannel ch = new EmbeddedChannel(encoder.get());
      try {
        ch.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
            RAW.newHeaders().add(HttpHeaderNames.CONTENT_LENGTH, "2")));
        assertThatThrownBy(() -> ch.writeOutbound(new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer(new byte[2]))))
            .hasRootCauseInstanceOf(IllegalStateException.class)
            .hasMessageContaining("unexpected message type");
        // The head's own body still ends it, and a whole response may follow.
        ch.writeOutbound(new DefaultLastHttpContent(Unpooled.wrappedBuffer(new byte[2])));
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
            Unpooled.wrappedBuffer(new byte[1]), RAW.newHeaders().add(HttpHeaderNames.CONTENT_LENGTH, "1"),
            RAW.newHeaders()));
      } finally {
        ch.finishAndReleaseAll();
      }
    }
  }
}
