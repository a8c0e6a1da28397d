package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.HttpConversionUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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

  @Test
  void eachHopByHopHeaderAloneIsStripped() {
    List<String> names = new ArrayList<>(List.of("Connection", "KEEP-ALIVE", "proxy-connection", "Transfer-Encoding",
        "upgrade", "Proxy-Authorization", "proxy-authenticate", "te"));
    for (HttpConversionUtil.ExtensionHeaderNames ext : HttpConversionUtil.ExtensionHeaderNames.values()) {
      names.add(ext.text().toString().toUpperCase(Locale.ROOT));
    }
    for (String name : names) {
      HttpHeaders h = new DefaultHttpHeaders().add("Accept", "*/*").add(name, "x");
      HopByHopHeaders.strip(h, HttpProtocol.HTTP_1_1);
      assertThat(h.names()).as(name).containsExactly("Accept");
    }
  }

  @Test
  void aConnectionHeaderOfOneTokenIsReadAsTheListIs() {
    HttpHeaders keepAlive = new DefaultHttpHeaders().add("Connection", "Keep-Alive").add("Keep-Alive", "timeout=5")
        .add("X-End", "kept");
    assertThat(HopByHopHeaders.strip(keepAlive, HttpProtocol.HTTP_1_1)).isFalse();
    assertThat(keepAlive.names()).containsExactly("X-End");

    HttpHeaders close = new DefaultHttpHeaders().add("Connection", "CLOSE").add("X-End", "kept");
    assertThat(HopByHopHeaders.strip(close, HttpProtocol.HTTP_1_1)).isTrue();
    assertThat(close.names()).containsExactly("X-End");

    HttpHeaders named = new DefaultHttpHeaders().add("Connection", "X-Private").add("X-Private", "secret")
        .add("X-End", "kept");
    assertThat(HopByHopHeaders.strip(named, HttpProtocol.HTTP_1_1)).isFalse();
    assertThat(named.names()).containsExactly("X-End");
  }

  @Test
  void endToEndHeadersAreLeftAsTheyAre() {
    HttpHeaders h = new DefaultHttpHeaders().add("Host", "a:80").add("Accept", "*/*").add("X-Te", "1")
        .add("Connections", "2");
    assertThat(HopByHopHeaders.strip(h, HttpProtocol.H2C)).isFalse();
    assertThat(h.names()).containsExactlyInAnyOrder("Host", "Accept", "X-Te", "Connections");
  }
}
