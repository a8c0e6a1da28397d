package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of parsing one head with {@link PlainHead} on a keep-alive connection where every head
 * repeats the previous one: an nginx response head (with its 1 KiB body behind it, as the origin's
 * read leaves it) and a curl request head, both from direct buffers. The forked JMH counterpart of
 * {@link PlainHeadCpuTime}'s two parse cases, steadier on a shared host; run it against two builds to
 * compare them. PlainHead is package-private in core, hence this package.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PlainHeadBenchmark {

  private ByteBuf response;
  private ByteBuf request;
  private PlainHead responses;
  private PlainHead requests;

  @Setup
  public void setUp() {
    response = PlainHeadCpuTime.direct(PlainHeadCpuTime.NGINX_HEAD + "x".repeat(1024));
    request = PlainHeadCpuTime.direct(PlainHeadCpuTime.CURL_HEAD);
    responses = new PlainHead();
    requests = new PlainHead();
  }

  @TearDown
  public void tearDown() {
    response.release();
    request.release();
  }

  @Benchmark
  public int parseResponse() {
    response.readerIndex(0);
    return responses.parseResponse(response).headers().size();
  }

  @Benchmark
  public int parseRequest() {
    request.readerIndex(0);
    return requests.parseRequest(request).headers().size();
  }
}
