package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.portage.core.net.NettyTransport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What Netty's {@code HttpServerKeepAliveHandler} does behind a server codec, pinned on a real
 * socket: each case runs against Netty's handler behind {@link ServerHttpCodec} and against the
 * listener's own pipeline ({@link CleartextHttpInitializer}, whose codec does the same job), and
 * both must write the same bytes and close (or not) at the same point. Every exchange ends with
 * the client reading to end of stream, so a connection closed too early loses answers and one kept
 * open too long times the read out.
 */
class ServerKeepAliveTest {

  private static EventLoopGroup group;

  /** The two pipelines under comparison. */
  enum Server {
    NETTY_HANDLER(handler -> new ChannelInitializer<>() {
      @Override
      protected void initChannel(Channel ch) {
        ch.config().setAutoRead(false);
        ch.pipeline().addLast(new ServerHttpCodec(), new HttpServerKeepAliveHandler(), handler);
        ch.read();
      }
    }),
    LISTENER(handler -> new CleartextHttpInitializer(protocol -> handler));

    final Function<ChannelHandler, ChannelHandler> initializer;

    Server(Function<ChannelHandler, ChannelHandler> initializer) {
      this.initializer = initializer;
    }
  }

  @BeforeAll
  static void start() {
    // NIO: Netty's handler closes after a response's write completes, which NIO does at once and
    // io_uring later, so only on NIO is its behaviour the reference (see the last test).
    group = NettyTransport.NIO.newEventLoopGroup(1, "keepalive-test");
  }

  @AfterAll
  static void stop() {
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private static final String CLOSE = "GET /len HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";

  private static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n";
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void aRequestAskingToCloseGetsConnectionCloseAndTheConnectionEnds(Server server) throws Exception {
    List<String> answers = exchange(server, get("/len") + CLOSE);

    assertThat(answers).hasSize(2);
    assertThat(closes(answers.get(0))).isFalse();
    assertThat(closes(answers.get(1))).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void anHttp10RequestWithoutKeepAliveIsAnsweredWithCloseAndTheConnectionEnds(Server server)
      throws Exception {
    List<String> answers = exchange(server, "GET /len HTTP/1.0\r\nHost: a\r\n\r\n");

    assertThat(answers).hasSize(1);
    assertThat(closes(answers.get(0))).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void anHttp10RequestWithKeepAliveKeepsTheConnection(Server server) throws Exception {
    List<String> answers =
        exchange(server, "GET /len HTTP/1.0\r\nHost: a\r\nConnection: Keep-Alive\r\n\r\n" + CLOSE);

    assertThat(answers).hasSize(2);
    assertThat(closes(answers.get(0))).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void aResponseWithoutLengthEndsAKeepAliveConnection(Server server) throws Exception {
    List<String> answers = exchange(server, get("/nolen") + get("/len"));

    assertThat(answers).hasSize(1);
    assertThat(closes(answers.get(0))).isTrue();
    assertThat(answers.get(0)).endsWith("\r\n\r\nno length");
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void responsesThatDelimitThemselvesKeepTheConnection(Server server) throws Exception {
    List<String> answers =
        exchange(server, get("/chunked") + get("/no-content") + get("/multipart") + CLOSE);

    assertThat(answers).hasSize(4);
    assertThat(answers.subList(0, 3)).noneMatch(ServerKeepAliveTest::closes);
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void aResponseSayingCloseEndsTheConnection(Server server) throws Exception {
    List<String> answers = exchange(server, get("/close") + get("/len"));

    assertThat(answers).hasSize(1);
    assertThat(closes(answers.get(0))).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void anInterimResponseDoesNotAnswerTheRequestAskingToClose(Server server) throws Exception {
    List<String> answers =
        exchange(server, "GET /continue HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");

    assertThat(answers).hasSize(2);
    assertThat(answers.get(0)).startsWith("HTTP/1.1 100 Continue");
    assertThat(closes(answers.get(0))).isFalse();
    assertThat(closes(answers.get(1))).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void pipelinedRequestsAfterOneAskingToCloseAreNotAnswered(Server server) throws Exception {
    List<String> answers = exchange(server, get("/len") + CLOSE + get("/len"));

    assertThat(answers).hasSize(2);
    assertThat(closes(answers.get(0))).isFalse();
    assertThat(closes(answers.get(1))).isTrue();
  }

  @ParameterizedTest
  @EnumSource(NettyTransport.class)
  void theListenerAnswersNoRequestPipelinedAfterOneAskingToCloseOnAnyTransport(NettyTransport transport)
      throws Exception {
    assumeTrue(transport.isAvailable(), transport + " unavailable");
    EventLoopGroup loop = transport.newEventLoopGroup(1, "keepalive-test-" + transport);
    try {
      List<String> answers = exchange(
          loop, transport, Server.LISTENER, get("/len") + CLOSE + get("/len") + get("/len"));

      assertThat(answers).hasSize(2);
      assertThat(closes(answers.get(1))).isTrue();
    } finally {
      loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @ParameterizedTest
  @EnumSource(Server.class)
  void anAnswerWithoutLengthToAnEarlierPipelinedRequestClosesAfterIt(Server server)
      throws Exception {
    List<String> answers = exchange(server, get("/nolen") + get("/len") + get("/len"));

    assertThat(answers).hasSize(1);
    assertThat(closes(answers.get(0))).isTrue();
  }

  private static boolean closes(String answer) {
    String head = answer.substring(0, answer.indexOf("\r\n\r\n") + 2).toLowerCase(Locale.ROOT);
    return head.contains("\r\nconnection: close\r\n");
  }

  /** Sends {@code requests} at once and reads until the server closes; the answers, in order. */
  private static List<String> exchange(Server server, String requests) throws Exception {
    return exchange(group, NettyTransport.NIO, server, requests);
  }

  private static List<String> exchange(
      EventLoopGroup loop, NettyTransport transport, Server server, String requests) throws Exception {
    Channel listener = new ServerBootstrap()
        .group(loop)
        .channel(transport.serverChannelType())
        .childHandler(server.initializer.apply(new Answers()))
        .bind(new InetSocketAddress("127.0.0.1", 0))
        .sync()
        .channel();
    try (Socket socket = new Socket()) {
      socket.connect(listener.localAddress());
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(requests.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      in.transferTo(all);
      return split(all.toString(StandardCharsets.ISO_8859_1));
    } finally {
      listener.close().sync();
    }
  }

  private static List<String> split(String transcript) {
    List<String> answers = new ArrayList<>();
    int from = 0;
    while (from < transcript.length()) {
      int next = transcript.indexOf("HTTP/1.", from + 1);
      int end = next < 0 ? transcript.length() : next;
      answers.add(transcript.substring(from, end));
      from = end;
    }
    return answers;
  }

  /** Answers each request by its path, one request at a time (it reads the next when done). */
  @ChannelHandler.Sharable
  private static final class Answers extends ChannelInboundHandlerAdapter {
    private final java.util.Map<Channel, String> paths = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.read();
      ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest request) {
        paths.put(ctx.channel(), request.uri());
      }
      if (msg instanceof LastHttpContent) {
        answer(ctx, paths.remove(ctx.channel()));
        ctx.read();
      }
      ReferenceCountUtil.release(msg);
    }

    private static void answer(ChannelHandlerContext ctx, String path) {
      switch (path) {
        case "/nolen" -> {
          ctx.write(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
          ctx.writeAndFlush(new DefaultHttpContent(text("no length")));
          ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        case "/chunked" -> {
          HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
          head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
          ctx.write(head);
          ctx.writeAndFlush(new DefaultHttpContent(text("chunk")));
          ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        case "/no-content" -> {
          ctx.write(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT));
          ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        case "/multipart" -> {
          HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
          head.headers().set(HttpHeaderNames.CONTENT_TYPE, "multipart/byteranges; boundary=x");
          ctx.write(head);
          ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }
        case "/continue" -> {
          ctx.writeAndFlush(
              new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
          ctx.writeAndFlush(sized("after continue"));
        }
        case "/close" -> {
          FullHttpResponse r = sized("bye");
          r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
          ctx.writeAndFlush(r);
        }
        default -> ctx.writeAndFlush(sized("with length"));
      }
    }

    private static FullHttpResponse sized(String body) {
      FullHttpResponse r =
          new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, text(body));
      r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
      return r;
    }

    private static io.netty.buffer.ByteBuf text(String s) {
      return Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
    }
  }
}
