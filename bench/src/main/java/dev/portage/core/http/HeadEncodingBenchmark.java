package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of encoding one relayed HTTP/1.1 head (then its empty last content), Portage's encoders
 * against Netty's, each in an embedded channel with Netty's default allocator: a response head as
 * nginx sends it (Server, Date, Content-Type, Content-Length, Connection, Last-Modified, ETag,
 * Accept-Ranges) and a request head as curl sends it after the sidecar strips hop-by-hop headers
 * (Host, User-Agent, Accept), names and values as the sidecar's parser builds them (names as sent,
 * values as Strings). {@code *Head} runs the whole encoder in an embedded channel (what a write
 * costs); {@code *HeadOnly} only the head hooks (initial line, headers, blank line) into a fresh
 * buffer from the default allocator, the part that differs. With {@code encoder=portage-parsed} the
 * heads are the ones Portage's parser builds from those bytes, as a relay writes them. The
 * encoders are package-private in core, hence this package.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HeadEncodingBenchmark {

  /** {@code portage-parsed}: Portage's encoders, the heads as its parser builds them from bytes. */
  @Param({"portage", "netty", "portage-parsed"})
  public String encoder;

  private HeadOnly heads;
  private EmbeddedChannel response;
  private EmbeddedChannel request;
  private HttpMessage responseHead;
  private HttpMessage requestHead;

  @Setup
  public void setUp() {
    boolean ours = encoder.startsWith("portage");
    heads = ours ? new PortageHeads() : new NettyHeads();
    ChannelHandler responses = ours ? new Http1ResponseEncoder() : new HttpResponseEncoder();
    ChannelHandler requests = ours ? new Http1RequestEncoder() : new HttpRequestEncoder();
    response = new EmbeddedChannel(responses);
    request = new EmbeddedChannel(requests);
    HttpHeadersFactory parsed =
        DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);
    HttpHeaders nginx = parsed.newHeaders()
        .add(AsciiString.cached("Server"), "nginx/1.22.1")
        .add(AsciiString.cached("Date"), "Fri, 27 Nov 2026 05:30:00 GMT")
        .add(AsciiString.cached("Content-Type"), "text/html")
        .add(AsciiString.cached("Content-Length"), "615")
        .add(AsciiString.cached("Connection"), "keep-alive")
        .add(AsciiString.cached("Last-Modified"), "Tue, 24 Nov 2026 10:12:01 GMT")
        .add(AsciiString.cached("ETag"), "\"6566f1e1-267\"")
        .add(AsciiString.cached("Accept-Ranges"), "bytes");
    responseHead = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, nginx);
    HttpHeaders curl = parsed.newHeaders()
        .add(AsciiString.cached("Host"), "bench.default.svc.cluster.local:8080")
        .add(AsciiString.cached("User-Agent"), "curl/8.5.0")
        .add(AsciiString.cached("Accept"), "*/*");
    requestHead = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/index.html", curl);
    if (encoder.equals("portage-parsed")) {
      // The same heads as the relay has them: ParsedHeaders, written by index.
      ByteBuf responseBytes = bytesOf(responseHead);
      ByteBuf requestBytes = bytesOf(requestHead);
      responseHead = new PlainHead().parseResponse(responseBytes);
      requestHead = new PlainHead().parseRequest(requestBytes);
      responseBytes.release();
      requestBytes.release();
    }
  }

  /** The head as it would arrive: Netty's encoding of it, in a direct buffer. */
  private static ByteBuf bytesOf(HttpMessage head) {
    EmbeddedChannel ch = new EmbeddedChannel(
        head instanceof HttpResponse ? new HttpResponseEncoder() : new HttpRequestEncoder());
    ch.writeOutbound(head);
    ByteBuf out = ch.readOutbound();
    ByteBuf direct = ByteBufAllocator.DEFAULT.directBuffer(out.readableBytes());
    direct.writeBytes(out);
    out.release();
    ch.finishAndReleaseAll();
    return direct;
  }

  @TearDown
  public void tearDown() {
    response.finishAndReleaseAll();
    request.finishAndReleaseAll();
  }

  private static int encode(EmbeddedChannel ch, HttpMessage head) {
    ch.writeOutbound(head, LastHttpContent.EMPTY_LAST_CONTENT);
    int bytes = 0;
    ByteBuf out;
    while ((out = ch.readOutbound()) != null) {
      bytes += out.readableBytes();
      out.release();
    }
    return bytes;
  }

  @Benchmark
  public int responseHead() {
    return encode(response, responseHead);
  }

  @Benchmark
  public int requestHead() {
    return encode(request, requestHead);
  }

  @Benchmark
  public int responseHeadOnly() {
    return heads.response((HttpResponse) responseHead);
  }

  @Benchmark
  public int requestHeadOnly() {
    return heads.request((HttpRequest) requestHead);
  }

  /** The encoders' head hooks, reachable from subclasses only. */
  private interface HeadOnly {
    int response(HttpResponse head);

    int request(HttpRequest head);
  }

  private static int written(ByteBuf buf) {
    ByteBufUtil.writeShortBE(buf, CRLF);
    int n = buf.readableBytes();
    buf.release();
    return n;
  }

  private static final int CRLF = ('\r' << 8) | '\n';

  private static final class PortageHeads implements HeadOnly {
    private final ResponseHooks responses = new ResponseHooks();
    private final RequestHooks requests = new RequestHooks();

    @Override
    public int response(HttpResponse head) {
      ByteBuf buf = ByteBufAllocator.DEFAULT.buffer(256);
      responses.encodeInitialLine(buf, head);
      responses.encodeHeaders(head.headers(), buf);
      return written(buf);
    }

    @Override
    public int request(HttpRequest head) {
      ByteBuf buf = ByteBufAllocator.DEFAULT.buffer(256);
      requests.encodeInitialLine(buf, head);
      requests.encodeHeaders(head.headers(), buf);
      return written(buf);
    }

    private static final class ResponseHooks extends Http1ResponseEncoder {}

    private static final class RequestHooks extends Http1RequestEncoder {}
  }

  private static final class NettyHeads implements HeadOnly {
    private final ResponseHooks responses = new ResponseHooks();
    private final RequestHooks requests = new RequestHooks();

    @Override
    public int response(HttpResponse head) {
      return responses.head(head);
    }

    @Override
    public int request(HttpRequest head) {
      return requests.head(head);
    }

    private static final class ResponseHooks extends HttpResponseEncoder {
      int head(HttpResponse head) {
        ByteBuf buf = ByteBufAllocator.DEFAULT.buffer(256);
        try {
          encodeInitialLine(buf, head);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        encodeHeaders(head.headers(), buf);
        return written(buf);
      }
    }

    private static final class RequestHooks extends HttpRequestEncoder {
      int head(HttpRequest head) {
        ByteBuf buf = ByteBufAllocator.DEFAULT.buffer(256);
        try {
          encodeInitialLine(buf, head);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        encodeHeaders(head.headers(), buf);
        return written(buf);
      }
    }
  }
}
