package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link HeaderLines}: the same lines, in the same order, as the headers' own iterator. */
class HeaderLinesTest {

  private static List<String> byPosition(HttpHeaders h) {
    List<String> lines = new ArrayList<>();
    for (int i = 0, n = HeaderLines.count(h); i < n; i++) {
      lines.add(HeaderLines.name(h, i) + "=" + HeaderLines.value(h, i));
    }
    return lines;
  }

  private static List<String> byIterator(HttpHeaders h) {
    List<String> lines = new ArrayList<>();
    h.iteratorCharSequence().forEachRemaining(e -> lines.add(e.getKey() + "=" + e.getValue()));
    return lines;
  }

  @Test
  void parsedHeadersReadByPositionAsTheirIteratorReadsThemAlsoAfterChanges() {
    ByteBuf in = Unpooled.copiedBuffer("GET / HTTP/1.1\r\nHost: a\r\nX-One: 1\r\nhost:  b \r\n"
        + "Content-Type: application/grpc\r\n\r\n", StandardCharsets.ISO_8859_1);
    try {
      HttpRequest r = new PlainHead().parseRequest(in);
      HttpHeaders h = r.headers();
      assertThat(HeaderLines.count(h)).isEqualTo(4);
      assertThat(byPosition(h)).containsExactly(
          "Host=a", "X-One=1", "host=b", "Content-Type=application/grpc");
      h.remove("X-One").add("X-Two", "2").set("Host", "c");
      assertThat(HeaderLines.count(h)).isEqualTo(h.size());
      assertThat(byPosition(h)).isEqualTo(byIterator(h));
    } finally {
      in.release();
    }
  }

  @Test
  void otherHeadersHaveNoPositions() {
    assertThat(HeaderLines.count(new DefaultHttpHeaders().add("Host", "a"))).isEqualTo(-1);
  }
}
