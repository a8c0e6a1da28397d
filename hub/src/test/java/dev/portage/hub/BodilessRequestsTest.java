package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hub's request pipeline (codec, {@link BodilessRequests}, aggregator) fed raw request bytes:
 * requests without a body pass as they were decoded, requests with one are aggregated and limited
 * exactly as before.
 */
class BodilessRequestsTest {

  private static final int LIMIT = 64;

  private final EmbeddedChannel channel = new EmbeddedChannel(
      new HttpServerCodec(), new BodilessRequests(), new HttpObjectAggregator(LIMIT));

  @AfterEach
  void tearDown() {
    channel.finishAndReleaseAll();
  }

  private void send(String raw) {
    channel.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
  }

  private FullHttpRequest read() {
    Object msg = channel.readInbound();
    assertThat(msg).isInstanceOf(FullHttpRequest.class);
    return (FullHttpRequest) msg;
  }

  /** The decoded response heads the pipeline wrote back to the client, as text. */
  private String written() {
    StringBuilder out = new StringBuilder();
    for (Object msg; (msg = channel.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) msg;
      out.append(b.toString(StandardCharsets.ISO_8859_1));
      b.release();
    }
    return out.toString();
  }

  @Test
  void bodilessGetPassesWithoutAggregation() {
    send("GET /api/v1/namespaces/default/pods/pod-0 HTTP/1.1\r\nHost: hub\r\n"
        + "User-Agent: kubelet/v1.30.0\r\nAccept: application/json\r\n\r\n");
    FullHttpRequest r = read();
    try {
      assertThat(r.uri()).isEqualTo("/api/v1/namespaces/default/pods/pod-0");
      assertThat(r.content().readableBytes()).isZero();
      assertThat(r.headers().get(HttpHeaderNames.ACCEPT)).isEqualTo("application/json");
      // The aggregator would have added "Content-Length: 0": the head is passed on as decoded.
      assertThat(r.headers().contains(HttpHeaderNames.CONTENT_LENGTH)).isFalse();
      assertThat(r.decoderResult().isSuccess()).isTrue();
    } finally {
      r.release();
    }
    assertThat((Object) channel.readInbound()).isNull(); // the codec's empty end is not passed on
  }

  @Test
  void headAndDeleteAndZeroLengthPostAreBodiless() {
    send("HEAD /api/v1/nodes/n1 HTTP/1.1\r\nHost: hub\r\n\r\n"
        + "DELETE /api/v1/namespaces/default/pods/p HTTP/1.1\r\nHost: hub\r\n\r\n"
        + "POST /api/v1/namespaces/default/events HTTP/1.1\r\nHost: hub\r\nContent-Length: 0\r\n\r\n");
    for (String method : new String[] {"HEAD", "DELETE", "POST"}) {
      FullHttpRequest r = read();
      assertThat(r.method().name()).isEqualTo(method);
      assertThat(r.content().readableBytes()).isZero();
      r.release();
    }
    assertThat((Object) channel.readInbound()).isNull();
  }

  @Test
  void bodyIsStillAggregated() {
    send("PUT /api/v1/nodes/n1/status HTTP/1.1\r\nHost: hub\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        + "GET /api/v1/nodes/n1 HTTP/1.1\r\nHost: hub\r\n\r\n"
        + "POST /api/v1/namespaces/default/events HTTP/1.1\r\nHost: hub\r\nContent-Length: 3\r\n\r\nabc");
    FullHttpRequest put = read();
    assertThat(put.content().toString(StandardCharsets.US_ASCII)).isEqualTo("hello world");
    assertThat(put.headers().getInt(HttpHeaderNames.CONTENT_LENGTH)).isEqualTo(11);
    assertThat(put.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)).isFalse();
    put.release();
    FullHttpRequest get = read(); // a bodiless request between two with bodies
    assertThat(get.method().name()).isEqualTo("GET");
    assertThat(get.content().readableBytes()).isZero();
    get.release();
    FullHttpRequest post = read();
    assertThat(post.content().toString(StandardCharsets.US_ASCII)).isEqualTo("abc");
    post.release();
    assertThat((Object) channel.readInbound()).isNull();
  }

  @Test
  void oversizedBodyIsRefusedAsBefore() {
    send("POST /api/v1/namespaces/default/events HTTP/1.1\r\nHost: hub\r\nContent-Length: "
        + (LIMIT + 1) + "\r\n\r\n");
    assertThat((Object) channel.readInbound()).isNull();
    assertThat(written()).startsWith("HTTP/1.1 413 Request Entity Too Large\r\n");
  }

  @Test
  void oversizedChunkedBodyIsRefusedAsBefore() {
    String chunk = "x".repeat(LIMIT + 1);
    send("POST /api/v1/namespaces/default/events HTTP/1.1\r\nHost: hub\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(chunk.length()) + "\r\n" + chunk
        + "\r\n0\r\n\r\n");
    assertThat((Object) channel.readInbound()).isNull();
    assertThat(written()).startsWith("HTTP/1.1 413 Request Entity Too Large\r\n");
  }

  @Test
  void expectContinueGoesThroughTheAggregator() {
    send("PUT /api/v1/nodes/n1 HTTP/1.1\r\nHost: hub\r\nContent-Length: 2\r\n"
        + "Expect: 100-continue\r\n\r\n");
    assertThat(written()).startsWith("HTTP/1.1 100 Continue\r\n");
    send("{}");
    FullHttpRequest r = read();
    assertThat(r.content().toString(StandardCharsets.US_ASCII)).isEqualTo("{}");
    assertThat(r.headers().contains(HttpHeaderNames.EXPECT)).isFalse();
    r.release();
  }

  @Test
  void expectOnABodilessRequestIsLeftToTheAggregator() {
    send("GET /api/v1/nodes/n1 HTTP/1.1\r\nHost: hub\r\nExpect: 100-continue\r\n\r\n");
    FullHttpRequest r = read();
    assertThat(r.content().readableBytes()).isZero();
    r.release();
    written(); // whatever the aggregator answers, as before
  }

  @Test
  void malformedRequestKeepsItsFailure() {
    send("GET /x HTTP/1.1\r\nHost: hub\r\nContent-Length: nope\r\n\r\n");
    Object msg = channel.readInbound();
    try {
      assertThat(msg).isInstanceOf(FullHttpRequest.class);
      assertThat(((FullHttpRequest) msg).decoderResult().isFailure()).isTrue();
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  @Test
  void bodilessHeadDecidedFromHeaders() {
    DefaultHttpRequest plain = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/");
    assertThat(BodilessRequests.bodiless(plain)).isTrue();
    plain.headers().set(HttpHeaderNames.CONTENT_LENGTH, "12");
    assertThat(BodilessRequests.bodiless(plain)).isFalse();
    plain.headers().set(HttpHeaderNames.CONTENT_LENGTH, "0");
    assertThat(BodilessRequests.bodiless(plain)).isTrue();
    plain.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
    assertThat(BodilessRequests.bodiless(plain)).isFalse();
  }
}
