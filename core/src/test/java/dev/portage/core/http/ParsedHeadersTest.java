package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The framing facts {@link PlainHead} records in {@link ParsedHeaders}: the same answers as Netty's
 * lookups on the same headers, and still the same after the headers change.
 */
class ParsedHeadersTest {

  private static HttpRequest request(String head) {
    ByteBuf in = Unpooled.copiedBuffer(head, StandardCharsets.ISO_8859_1);
    try {
      HttpRequest r = new PlainHead().parseRequest(in);
      assertThat(r).as(head).isNotNull();
      assertThat(r.headers()).isInstanceOf(ParsedHeaders.class);
      return r;
    } finally {
      in.release();
    }
  }

  private static HttpResponse response(String head) {
    ByteBuf in = Unpooled.copiedBuffer(head, StandardCharsets.ISO_8859_1);
    try {
      HttpResponse r = new PlainHead().parseResponse(in);
      assertThat(r).as(head).isNotNull();
      return r;
    } finally {
      in.release();
    }
  }

  private static boolean known(HttpMessage m) {
    return ((ParsedHeaders) m.headers()).known();
  }

  /** The same message with Netty's plain headers: what every answer must equal. */
  private static HttpMessage plain(HttpMessage m) {
    // Copied through the parsed headers' own iteration, which leaves their facts known.
    HttpHeaders copy = new DefaultHttpHeaders().add(m.headers());
    if (m instanceof HttpRequest r) {
      return new DefaultHttpRequest(r.protocolVersion(), r.method(), r.uri(), copy);
    }
    HttpResponse r = (HttpResponse) m;
    return new DefaultHttpResponse(r.protocolVersion(), r.status(), copy);
  }

  private static List<String> lines(HttpHeaders h) {
    return h.entries().stream().map(e -> e.getKey() + ": " + e.getValue()).toList();
  }

  private static final List<String> REQUESTS = List.of(
      "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, CLOSE\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: x-private , keep-alive\r\nX-Private: 1\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: ,closed\r\n\r\n",
      "GET / HTTP/1.0\r\nHost: a\r\n\r\n",
      "GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n",
      "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
      "GET / HTTP/1.1\r\nTE: trailers\r\nKeep-Alive: timeout=5\r\nProxy-Authorization: x\r\n\r\n",
      "GET / HTTP/1.1\r\nx-http2-scheme: http\r\nProxy-Connection: keep-alive\r\n\r\n");

  private static final List<String> RESPONSES = List.of(
      "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n",
      "HTTP/1.1 200 OK\r\nServer: x\r\n\r\n",
      "HTTP/1.1 204 No Content\r\n\r\n",
      "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
      "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\nConnection: close\r\n\r\n");

  @Test
  void everyAnswerFromTheFactsIsNettysAnswer() {
    for (String head : REQUESTS) {
      HttpRequest r = request(head);
      HttpMessage p = plain(r);
      assertThat(known(r)).as(head).isTrue();
      assertThat(KeepAlive.isKeepAlive(r)).as(head).isEqualTo(HttpUtil.isKeepAlive(p));
      assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null)).as(head)
          .isEqualTo(HttpFraming.hasBody(p, HttpProtocol.HTTP_1_1, null));
      assertThat(HttpFraming.isContentLengthSet(r)).isEqualTo(HttpUtil.isContentLengthSet(p));
      assertThat(HttpFraming.isChunked(r)).isEqualTo(HttpUtil.isTransferEncodingChunked(p));
      boolean close = HopByHopHeaders.strip(p.headers(), HttpProtocol.HTTP_1_1);
      assertThat(HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1)).as(head).isEqualTo(close);
      assertThat(lines(r.headers())).as(head).isEqualTo(lines(p.headers()));
    }
    for (String head : RESPONSES) {
      for (HttpMethod method : List.of(HttpMethod.GET, HttpMethod.HEAD)) {
        HttpResponse r = response(head);
        HttpMessage p = plain(r);
        assertThat(known(r)).as(head).isTrue();
        assertThat(KeepAlive.isKeepAlive(r)).as(head).isEqualTo(HttpUtil.isKeepAlive(p));
        assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, method)).as(head + method)
            .isEqualTo(HttpFraming.hasBody(p, HttpProtocol.HTTP_1_1, method));
        assertThat(HttpFraming.isContentLengthSet(r)).isEqualTo(HttpUtil.isContentLengthSet(p));
        assertThat(HttpFraming.isChunked(r)).isEqualTo(HttpUtil.isTransferEncodingChunked(p));
        boolean close = HopByHopHeaders.strip(p.headers(), HttpProtocol.HTTP_1_1);
        assertThat(HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1)).isEqualTo(close);
        assertThat(lines(r.headers())).as(head).isEqualTo(lines(p.headers()));
      }
    }
  }

  @Test
  void strippingKeepsTheFactsKnownAndTrue() {
    HttpResponse r = response("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\n");

    assertThat(HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1)).isTrue();

    assertThat(known(r)).isTrue();
    assertThat(r.headers().contains(HttpHeaderNames.CONNECTION)).isFalse();
    assertThat(KeepAlive.isKeepAlive(r)).isTrue(); // the close went with the header
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isTrue();
  }

  @Test
  void aConnectionCloseAddedAfterTheParseEndsKeepAlive() {
    HttpRequest r = request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(KeepAlive.isKeepAlive(r)).isTrue();

    r.headers().add("connection", "close");

    assertThat(KeepAlive.isKeepAlive(r)).isFalse();
    assertThat(HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1)).isTrue();
    assertThat(r.headers().contains("connection")).isFalse();
  }

  @Test
  void aConnectionValueChangedThroughAnEntryIsSeen() {
    HttpRequest r = request("GET / HTTP/1.1\r\nConnection: keep-alive\r\nHost: a\r\n\r\n");
    for (Iterator<Map.Entry<String, String>> it = r.headers().iteratorAsString(); it.hasNext(); ) {
      Map.Entry<String, String> e = it.next();
      if (e.getKey().equalsIgnoreCase("connection")) {
        e.setValue("close");
      }
    }

    assertThat(KeepAlive.isKeepAlive(r)).isFalse();
  }

  @Test
  void aRemovedConnectionHeaderNoLongerCloses() {
    HttpRequest r = request("GET / HTTP/1.0\r\nConnection: close\r\n\r\n");

    r.headers().remove("CONNECTION");
    r.headers().set(HttpHeaderNames.CONNECTION, "keep-alive");

    assertThat(KeepAlive.isKeepAlive(r)).isTrue();
  }

  @Test
  void aHopByHopHeaderAddedAfterTheParseIsStripped() {
    HttpRequest r = request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");

    r.headers().set("Upgrade", "h2c");
    r.headers().add("Keep-Alive", List.of("timeout=5"));

    HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1);
    assertThat(r.headers().names()).containsExactly("Host");
  }

  @Test
  void aLengthAddedOrRemovedAfterTheParseChangesTheBody() {
    HttpResponse none = response("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n");
    assertThat(HttpFraming.hasBody(none, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isTrue();
    none.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
    assertThat(HttpFraming.hasBody(none, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isFalse();
    assertThat(HttpFraming.isContentLengthSet(none)).isTrue();

    HttpResponse empty = response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assertThat(HttpFraming.hasBody(empty, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isFalse();
    empty.headers().remove("content-length");
    assertThat(known(empty)).isTrue();
    assertThat(HttpFraming.hasBody(empty, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isTrue();
    assertThat(HttpFraming.isContentLengthSet(empty)).isFalse();
  }

  @Test
  void aPlainLengthSetOverThePreviousKeepsTheFactsKnownAndAnyOtherValueForgetsThem() {
    HttpRequest r = request("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");

    r.headers().set(HttpHeaderNames.CONTENT_LENGTH, HttpHeaderValues.ZERO); // the hub's forwarded GET
    assertThat(known(r)).isTrue();
    assertThat(HttpFraming.isContentLengthSet(r)).isTrue();
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null)).isFalse();
    assertThat(KeepAlive.isKeepAlive(r)).isFalse(); // the other facts did not move

    r.headers().set("content-length", "0042");
    assertThat(known(r)).isTrue();
    assertThat(HttpUtil.getContentLength(r)).isEqualTo(42);
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null)).isTrue();

    r.headers().set(HttpHeaderNames.CONTENT_LENGTH, "+7"); // not plain: looked up as before
    assertThat(known(r)).isFalse();
    assertThat(HttpUtil.getContentLength(r)).isEqualTo(7);
    assertThat(r.headers().getAll(HttpHeaderNames.CONTENT_LENGTH)).containsExactly("+7");
  }

  @Test
  void chunkingSetAfterTheParseIsSeen() {
    HttpRequest r = request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null)).isFalse();

    HttpUtil.setTransferEncodingChunked(r, true);

    assertThat(HttpFraming.isChunked(r)).isTrue();
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null)).isTrue();
  }

  @Test
  void clearedHeadersHaveNoFacts() {
    HttpResponse r = response("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");

    r.headers().clear();

    assertThat(known(r)).isTrue();
    assertThat(KeepAlive.isKeepAlive(r)).isTrue();
    assertThat(HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, HttpMethod.GET)).isTrue();
  }

  @Test
  void headersCopiedInAreSeen() {
    HttpRequest r = request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");

    r.headers().add(new DefaultHttpHeaders().add("Connection", "close"));

    assertThat(KeepAlive.isKeepAlive(r)).isFalse();
  }

  @Test
  void connectionTokensAreCommaSeparatedTrimmedAndCaseBlind() {
    assertThat(ParsedHeaders.tokens("")).isZero();
    assertThat(ParsedHeaders.tokens(" , ,")).isZero();
    assertThat(ParsedHeaders.tokens("Close")).isEqualTo(ParsedHeaders.CLOSE);
    assertThat(ParsedHeaders.tokens("\tKEEP-ALIVE ,x")).isEqualTo(ParsedHeaders.KEEP_ALIVE | ParsedHeaders.OTHER);
    assertThat(ParsedHeaders.tokens("closed")).isEqualTo(ParsedHeaders.OTHER);
    assertThat(ParsedHeaders.tokens("keep-alive,close")).isEqualTo(ParsedHeaders.KEEP_ALIVE | ParsedHeaders.CLOSE);
  }

  @Test
  void onlyValuesTheParseMadeAreMarkedAsLatin1AndTheMarksFollowRemovals() {
    ParsedHeaders h = (ParsedHeaders) response(
        "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: c\r\nD: 4\r\n\r\n").headers();
    assertThat(List.of(h.latin1At(0), h.latin1At(1), h.latin1At(2), h.latin1At(3), h.latin1At(4)))
        .containsExactly(true, true, true, true, false);
    Iterator<CharSequence> b = h.valueCharSequenceIterator("B");
    b.next();
    b.remove(); // A, C, D: the marks move down with C and D
    h.add("E", new StringBuilder("\u0100"));
    h.set("A", "x"); // removed and added again at the end: C, D, E, A
    assertThat(lines(h)).containsExactly("C: c", "D: 4", "E: \u0100", "A: x");
    assertThat(List.of(h.latin1At(0), h.latin1At(1), h.latin1At(2), h.latin1At(3)))
        .containsExactly(true, true, false, false);
    h.iteratorCharSequence().next().setValue(new StringBuilder("changed"));
    assertThat(h.latin1At(0)).isFalse();
    assertThat(h.copy()).isInstanceOfSatisfying(ParsedHeaders.class, c -> assertThat(c.latin1At(1)).isTrue());
    h.clear();
    assertThat(h.latin1At(0)).isFalse();
  }
}
