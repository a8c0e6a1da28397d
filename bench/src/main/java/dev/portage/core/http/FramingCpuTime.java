package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * What the framing questions a proxy asks of every message cost, in thread CPU time and bytes
 * allocated: for a curl request head and an nginx response head (as {@link PlainHeadCpuTime} parses
 * them), the head parsed alone, then parsed and asked what the sidecar asks (keep-alive, body,
 * hop-by-hop strip; for the response also length and whether it delimits itself) answered from the
 * facts the parse recorded, and the same answered by the header lookups (the facts marked unknown
 * first, which costs one iterator). One JVM, cases interleaved round after round, medians printed.
 * Usage: {@code java -cp bench/target/benchmarks.jar dev.portage.core.http.FramingCpuTime
 * [opsPerRound [rounds]]}.
 */
public final class FramingCpuTime {

  private FramingCpuTime() {}

  /** Runs every case and prints one line each. */
  public static void main(String[] args) throws Exception {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 11;
    List<String> names = new ArrayList<>();
    List<IntSupplier> runs = new ArrayList<>();

    ByteBuf request = direct(PlainHeadCpuTime.CURL_HEAD);
    PlainHead requests = new PlainHead();
    ByteBuf response = direct(PlainHeadCpuTime.NGINX_HEAD + "x".repeat(1024));
    PlainHead responses = new PlainHead();

    names.add("request parse");
    runs.add(() -> {
      request.readerIndex(0);
      return requests.parseRequest(request).headers().size();
    });
    names.add("request facts");
    runs.add(() -> {
      request.readerIndex(0);
      return askRequest(requests.parseRequest(request));
    });
    names.add("request lookups");
    runs.add(() -> {
      request.readerIndex(0);
      HttpRequest r = requests.parseRequest(request);
      r.headers().iteratorCharSequence(); // facts unknown: every answer looks the headers up
      return askRequest(r);
    });
    names.add("response parse");
    runs.add(() -> {
      response.readerIndex(0);
      return responses.parseResponse(response).headers().size();
    });
    names.add("response facts");
    runs.add(() -> {
      response.readerIndex(0);
      return askResponse(responses.parseResponse(response));
    });
    names.add("response lookups");
    runs.add(() -> {
      response.readerIndex(0);
      HttpResponse r = responses.parseResponse(response);
      r.headers().iteratorCharSequence();
      return askResponse(r);
    });

    CpuTimeCases.run(names, runs, ops, rounds);
    request.release();
    response.release();
  }

  /** What the sidecar and the listener's codec ask of a request. */
  private static int askRequest(HttpRequest r) {
    int n = KeepAlive.isKeepAlive(r) ? 1 : 0; // the listener's codec
    n += KeepAlive.isKeepAlive(r) ? 2 : 0; // the sidecar's handler
    n += HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, null) ? 4 : 0;
    n += HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1) ? 8 : 0;
    return n;
  }

  /** What the sidecar (origin side, then client side) and the listener's codec ask of a response. */
  private static int askResponse(HttpResponse r) {
    int n = KeepAlive.isKeepAlive(r) && (HttpFraming.isContentLengthSet(r) || HttpFraming.isChunked(r))
        ? 1 : 0;
    n += HttpFraming.hasBody(r, HttpProtocol.HTTP_1_1, HttpMethod.GET) ? 2 : 0;
    n += HopByHopHeaders.strip(r.headers(), HttpProtocol.HTTP_1_1) ? 4 : 0;
    HttpFraming.prepare(r, HttpProtocol.HTTP_1_1, true);
    n += KeepAlive.isKeepAlive(r) && HttpFraming.isContentLengthSet(r) ? 8 : 0;
    return n;
  }

  private static ByteBuf direct(String text) {
    byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
    return ByteBufAllocator.DEFAULT.directBuffer(b.length).writeBytes(b);
  }
}
