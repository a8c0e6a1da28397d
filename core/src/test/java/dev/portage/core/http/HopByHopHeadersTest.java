package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

class HopByHopHeadersTest {

  private static HttpHeaders headers() {
    return new DefaultHttpHeaders()
        .add("Connection", "keep-alive, X-Private")
        .add("Connection", "Close")
        .add("X-Private", "secret")
        .add("Keep-Alive", "timeout=5")
        .add("Proxy-Connection", "keep-alive")
        .add("TE", "gzip, trailers")
        .add("Transfer-Encoding", "chunked")
        .add("Upgrade", "h2c")
        .add("Proxy-Authorization", "Basic Zm9v")
        .add("Proxy-Authenticate", "Basic")
        .add("x-http2-stream-id", "3")
        .add("X-End", "kept");
  }

  @Test
  void stripsEveryHopByHopHeaderAndThoseNamedInConnection() {
    HttpHeaders h = headers();

    boolean close = HopByHopHeaders.strip(h, HttpProtocol.HTTP_1_1);

    assertThat(close).isTrue();
    assertThat(h.names()).containsExactly("X-End");
  }

  @Test
  void keepsTeTrailersTowardHttp2Only() {
    HttpHeaders h = headers();

    assertThat(HopByHopHeaders.strip(h, HttpProtocol.H2C)).isTrue();

    assertThat(h.get("te")).isEqualTo("trailers");
    assertThat(h.contains("X-End")).isTrue();
    assertThat(h.size()).isEqualTo(2);
  }

  @Test
  void messageWithoutConnectionHeaderDoesNotAskToClose() {
    HttpHeaders h = new DefaultHttpHeaders().add("Accept", "*/*");
    assertThat(HopByHopHeaders.strip(h, HttpProtocol.HTTP_1_1)).isFalse();
    assertThat(h.get("accept")).isEqualTo("*/*");
  }
}
