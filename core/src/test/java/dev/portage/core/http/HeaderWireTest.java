package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The written form a repeated header block carries ({@link HeaderWire}): whatever a relay does to
 * the headers of a repeated head, our encoders write what Netty's write for the same headers, and
 * the form is used exactly while the headers equal it, whole or stripped.
 */
class HeaderWireTest {

  private static final String NGINX_RESPONSE =
      "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 29 Nov 2026 21:00:00 GMT\r\n"
          + "Content-Type: application/json\r\nContent-Length: 612\r\nConnection: keep-alive\r\n\r\n";

  private static final String NOMINATING_RESPONSE =
      "HTTP/1.1 200 OK\r\nServer: origin\r\nConnection: X-Hop, keep-alive\r\nX-Hop: 1\r\n"
          + "Keep-Alive: timeout=5\r\nContent-Length: 2\r\nVary: Accept\r\n\r\n";

  private static final String KUBELET_REQUEST =
      "GET /api/v1/namespaces/default/pods/p HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
          + "User-Agent: kubelet/v1.30.0 (linux/amd64) kubernetes/bench\r\nAccept: */*\r\n\r\n";

  private static final String CLOSING_REQUEST =
      "GET /healthz HTTP/1.1\r\nHost: hub\r\nConnection: close\r\nTE: trailers\r\n"
          + "Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";

  /**
   * What a relay may do to a head before writing it on, and the form its headers keep (-1: it
   * depends on the head, so only the written bytes are compared).
   */
  private record Edit(String name, Consumer<HttpMessage> apply, byte formAfter) {}

  private static final List<Edit> EDITS = List.of(
      new Edit("none", m -> { }, ParsedHeaders.WHOLE),
      new Edit("strip toward HTTP/1.1",
          m -> HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1), ParsedHeaders.STRIPPED),
      new Edit("strip twice", m -> {
        HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
        HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
      }, ParsedHeaders.STRIPPED),
      new Edit("strip, keep-alive set, framing prepared", m -> {
        HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
        HttpUtil.setKeepAlive(m, true);
        HttpFraming.prepare(m, HttpProtocol.HTTP_1_1, false);
      }, ParsedHeaders.STRIPPED),
      new Edit("strip, then close", m -> {
        HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
        HttpUtil.setKeepAlive(m, false);
      }, (byte) 0),
      new Edit("strip toward h2c", m -> HopByHopHeaders.strip(m.headers(), HttpProtocol.H2C),
          (byte) -1),
      new Edit("Host set", m -> m.headers().set(HttpHeaderNames.HOST, "10.0.0.1:6443"), (byte) 0),
      new Edit("an equal value set",
          m -> m.headers().set(HttpHeaderNames.ACCEPT, "*/*"), (byte) 0),
      new Edit("a header added", m -> m.headers().add("X-Added", "yes"), (byte) 0),
      new Edit("a header removed", m -> m.headers().remove(HttpHeaderNames.ACCEPT), (byte) -1),
      new Edit("an absent header removed", m -> m.headers().remove("X-Absent"), ParsedHeaders.WHOLE),
      new Edit("a value changed through its entry", m -> {
        Map.Entry<CharSequence, CharSequence> first = m.headers().iteratorCharSequence().next();
        first.setValue("changed");
      }, (byte) 0),
      new Edit("strip, then a value changed through its entry", m -> {
        HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
        m.headers().iteratorCharSequence().next().setValue("changed");
      }, (byte) 0),
      new Edit("cleared", m -> m.headers().clear(), (byte) 0));

  private static HttpMessage parse(PlainHead parser, String head, boolean request) {
    ByteBuf in = Unpooled.copiedBuffer(head, StandardCharsets.ISO_8859_1);
    try {
      HttpMessage m = request ? parser.parseRequest(in) : parser.parseResponse(in);
      assertThat(m).as(head).isNotNull();
      assertThat(in.isReadable()).isFalse();
      return m;
    } finally {
      in.release();
    }
  }

  /** The second parse of {@code head} on one parser: a repeated block. */
  private static HttpMessage repeated(String head, boolean request) {
    PlainHead parser = new PlainHead();
    parse(parser, head, request);
    return parse(parser, head, request);
  }

  /** The message as one encoder writes it, as text. */
  private static String encode(ChannelHandler encoder, HttpMessage message) {
    EmbeddedChannel ch = new EmbeddedChannel(encoder);
    try {
      ch.writeOutbound(message);
      StringBuilder out = new StringBuilder();
      ByteBuf buf;
      while ((buf = ch.readOutbound()) != null) {
        out.append(buf.toString(StandardCharsets.ISO_8859_1));
        buf.release();
      }
      return out.toString();
    } finally {
      ch.finishAndReleaseAll();
    }
  }

  /** The message with Netty's own headers holding the same lines in the same order. */
  private static HttpMessage plain(HttpMessage m) {
    HttpHeaders copy = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
    m.headers().iteratorCharSequence().forEachRemaining(e -> copy.add(e.getKey(), e.getValue()));
    return m instanceof HttpRequest r
        ? new DefaultHttpRequest(r.protocolVersion(), r.method(), r.uri(), copy)
        : new DefaultHttpResponse(m.protocolVersion(), ((HttpResponse) m).status(), copy);
  }

  private static String ours(HttpMessage m) {
    return encode(m instanceof HttpRequest ? new Http1RequestEncoder() : new Http1ResponseEncoder(), m);
  }

  private static String netty(HttpMessage m) {
    return encode(m instanceof HttpRequest ? new HttpRequestEncoder() : new HttpResponseEncoder(),
        plain(m));
  }

  private static byte form(HttpMessage m) {
    return ((ParsedHeaders) m.headers()).wireForm();
  }

  @Test
  void aHeadParsedLineByLineCarriesNoWrittenFormAndItsRepeatsDo() {
    PlainHead parser = new PlainHead();
    assertThat(form(parse(parser, NGINX_RESPONSE, false))).isZero();
    for (int i = 0; i < 3; i++) {
      HttpMessage again = parse(parser, NGINX_RESPONSE, false);
      assertThat(form(again)).isEqualTo(ParsedHeaders.WHOLE);
      assertThat(ours(again)).isEqualTo(NGINX_RESPONSE).isEqualTo(netty(again));
    }
  }

  @Test
  void everyEditOfARepeatedHeadIsWrittenAsNettyWritesItsHeaders() {
    List<String> failures = new ArrayList<>();
    for (String head : List.of(NGINX_RESPONSE, NOMINATING_RESPONSE, KUBELET_REQUEST, CLOSING_REQUEST)) {
      boolean request = !head.startsWith("HTTP/");
      for (Edit edit : EDITS) {
        HttpMessage m = repeated(head, request);
        edit.apply().accept(m);
        String what = edit.name() + " on " + head.substring(0, head.indexOf('\r'));
        // Headers with nothing hop-by-hop are their own stripped form: a strip leaves them whole.
        byte formAfter = edit.formAfter() == ParsedHeaders.STRIPPED && !head.contains("Connection:")
            ? ParsedHeaders.WHOLE : edit.formAfter();
        if (formAfter >= 0) {
          assertThat(form(m)).as(what + ": the form kept").isEqualTo(formAfter);
        }
        String expected = netty(m);
        String actual = ours(m);
        if (!actual.equals(expected)) {
          failures.add(what + ":\n" + actual + "--- Netty:\n" + expected);
        }
      }
    }
    assertThat(failures).isEmpty();
  }

  @Test
  void theWriterCopiesTheFormWhileTheHeadersSayTheyEqualIt() {
    // Given another block's form, the writer sends that form's lines: it copies, it does not
    // write the headers again.
    HttpMessage m = repeated(KUBELET_REQUEST, true);
    ParsedHeaders other = (ParsedHeaders) repeated(CLOSING_REQUEST, true).headers();
    ((ParsedHeaders) m.headers()).wire(HeaderWire.of(other));
    String requestLine = KUBELET_REQUEST.substring(0, KUBELET_REQUEST.indexOf('\n') + 1);
    String otherLines = CLOSING_REQUEST.substring(CLOSING_REQUEST.indexOf('\n') + 1);
    assertThat(ours(m)).isEqualTo(requestLine + otherLines);
  }

  @Test
  void aStripThatRemovesNothingKeepsTheWholeFormWhichIsTheStrippedOne() {
    HttpMessage m = repeated(KUBELET_REQUEST, true);
    HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
    assertThat(form(m)).isEqualTo(ParsedHeaders.WHOLE);
    assertThat(ours(m)).isEqualTo(KUBELET_REQUEST).isEqualTo(netty(m));
  }

  @Test
  void aChangedBlockGetsItsOwnWrittenForm() {
    // nginx's Date moves once a second: the next repeated block must not be written as the last.
    PlainHead parser = new PlainHead();
    String later = NGINX_RESPONSE.replace("21:00:00", "21:00:01");
    for (String head : List.of(NGINX_RESPONSE, NGINX_RESPONSE, later, later, NGINX_RESPONSE,
        NGINX_RESPONSE)) {
      HttpMessage m = parse(parser, head, false);
      HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
      HttpUtil.setKeepAlive(m, true);
      assertThat(ours(m)).isEqualTo(head.replace("Connection: keep-alive\r\n", ""))
          .isEqualTo(netty(m));
    }
  }

  @Test
  void theStrippedFormLeavesOutEveryHopByHopHeaderAndWhatConnectionNames() {
    HttpMessage m = repeated(NOMINATING_RESPONSE, false);
    HopByHopHeaders.strip(m.headers(), HttpProtocol.HTTP_1_1);
    assertThat(form(m)).isEqualTo(ParsedHeaders.STRIPPED);
    byte[] wire = ((ParsedHeaders) m.headers()).wireBytes();
    assertThat(new String(wire, StandardCharsets.ISO_8859_1))
        .isEqualTo("Server: origin\r\nContent-Length: 2\r\nVary: Accept\r\n");
  }

  @Test
  void aHeadLargerThanTheWritersArrayIsWrittenWhole() {
    // Past HeadWriter's scratch array the form goes to the buffer in a write of its own.
    String big = "x".repeat(HeadWriter.SCRATCH_SIZE + 10);
    String head = "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 0\r\n\r\n";
    HttpMessage m = repeated(head, false);
    assertThat(form(m)).isEqualTo(ParsedHeaders.WHOLE);
    assertThat(ours(m)).isEqualTo(head).isEqualTo(netty(m));
  }
}
