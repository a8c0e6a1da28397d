package dev.portage.core.http;

import dev.portage.core.net.NettyTransport;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What one relayed response costs the event loop that writes it to a real loopback socket (the
 * transport Portage picks, epoll on Linux): thread CPU time (user and system, so the socket writes
 * count) and bytes allocated per response, for a 1 KiB body as the sidecar relays it. Cases:
 * {@code split}, the head and then the body as a last content (how the sidecar and the hub write a
 * response), and {@code full}, one full response; each flushed on its own, as a relay does. Encoders:
 * {@code portage} (the listener's, as on the class path) and {@code netty} (Netty's own, a yardstick
 * for the host's state). A plain thread reads and drops the bytes. Rounds alternate the four
 * channels; medians are printed. Run it against two builds to compare them. Usage: {@code java -cp
 * bench/target/benchmarks.jar dev.portage.core.http.OneWriteCpuTime [responsesPerRound [rounds]]}.
 */
public final class OneWriteCpuTime {

  private static final com.sun.management.ThreadMXBean MX =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Responses written before waiting for the socket to take them. */
  private static final int BATCH = 32;

  private OneWriteCpuTime() {}

  /** Runs the comparison and prints one line per case and encoder. */
  public static void main(String[] args) throws Exception {
    int ops = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
    EventLoopGroup group = NettyTransport.best().newEventLoopGroup(1, "onewrite");
    try (ServerSocket server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress())) {
      Thread reader = new Thread(() -> drainAll(server), "onewrite-reader");
      reader.setDaemon(true);
      reader.start();
      long loopThread = group.submit(() -> Thread.currentThread().getId()).get();
      ByteBuf origin = ByteBufAllocator.DEFAULT.directBuffer(1024);
      origin.writerIndex(1024); // the body as the origin's read left it; the content is irrelevant
      String[] names = {"split portage", "split netty", "full portage", "full netty"};
      List<Channel> channels = new ArrayList<>();
      for (String name : names) {
        ChannelHandler encoder = name.endsWith("portage")
            ? new Http1ResponseEncoder() : new HttpResponseEncoder();
        channels.add(connect(group, server, encoder));
      }
      CpuTimeCases.rounds(List.of(names),
          i -> run(channels.get(i), names[i].startsWith("full"), origin, ops, loopThread), rounds,
          "response");
      for (Channel ch : channels) {
        ch.close().sync();
      }
      origin.release();
    } finally {
      group.shutdownGracefully().sync();
    }
  }

  private static Channel connect(EventLoopGroup group, ServerSocket server, ChannelHandler encoder)
      throws InterruptedException {
    return new Bootstrap()
        .group(group)
        .channel(NettyTransport.best().channelType())
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(encoder);
          }
        })
        .connect(new InetSocketAddress(server.getInetAddress(), server.getLocalPort()))
        .sync()
        .channel();
  }

  private static void drainAll(ServerSocket server) {
    while (true) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        return;
      }
      Thread t = new Thread(() -> {
        byte[] sink = new byte[1 << 16];
        try (InputStream in = s.getInputStream()) {
          while (in.read(sink) >= 0) {
            // dropped
          }
        } catch (IOException e) {
          // the channel closed
        }
      }, "onewrite-drain");
      t.setDaemon(true);
      t.start();
    }
  }

  /** Writes {@code ops} responses on the channel's loop: loop CPU ns and bytes per response. */
  private static double[] run(Channel ch, boolean full, ByteBuf origin, int ops, long loopThread)
      throws Exception {
    HttpHeaders headers = nginxHeaders();
    CompletableFuture<Void> done = new CompletableFuture<>();
    long cpu0 = MX.getThreadCpuTime(loopThread);
    long alloc0 = MX.getThreadAllocatedBytes(loopThread);
    ch.eventLoop().execute(new Runnable() {
      int left = ops;

      @Override
      public void run() {
        ChannelFuture last = null;
        for (int i = 0; i < BATCH && left > 0; i++, left--) {
          // Void promises, as the relays write; a real one on the batch's last write to wait on.
          boolean tail = i == BATCH - 1 || left == 1;
          ChannelPromise promise = tail ? ch.newPromise() : ch.voidPromise();
          if (full) {
            ch.write(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                origin.retainedSlice(), headers, EmptyHttpHeaders.INSTANCE), promise);
          } else {
            ch.write(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, headers),
                ch.voidPromise());
            ch.write(new DefaultLastHttpContent(origin.retainedSlice(), EmptyHttpHeaders.INSTANCE),
                promise);
          }
          if (tail) {
            last = promise;
          }
          ch.flush();
        }
        if (left == 0) {
          last.addListener(f -> done.complete(null));
        } else {
          last.addListener(f -> ch.eventLoop().execute(this));
        }
      }
    });
    done.get();
    long cpu = MX.getThreadCpuTime(loopThread) - cpu0;
    long alloc = MX.getThreadAllocatedBytes(loopThread) - alloc0;
    return new double[] {cpu / (double) ops, alloc / (double) ops};
  }

  private static HttpHeaders nginxHeaders() {
    return DefaultHttpHeadersFactory.headersFactory().withNameValidation(false).newHeaders()
        .add(AsciiString.cached("Server"), "nginx/1.22.1")
        .add(AsciiString.cached("Date"), "Fri, 27 Nov 2026 05:30:00 GMT")
        .add(AsciiString.cached("Content-Type"), "text/html")
        .add(AsciiString.cached("Content-Length"), "1024")
        .add(AsciiString.cached("Last-Modified"), "Tue, 24 Nov 2026 10:12:01 GMT")
        .add(AsciiString.cached("ETag"), "\"6566f1e1-400\"")
        .add(AsciiString.cached("Accept-Ranges"), "bytes");
  }
}
