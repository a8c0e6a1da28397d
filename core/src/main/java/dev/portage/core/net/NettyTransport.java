package dev.portage.core.net;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandle;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringDatagramChannel;
import io.netty.channel.uring.IoUringDomainSocketChannel;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerDomainSocketChannel;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Netty I/O transport, native io_uring, native epoll or NIO, and the one place that pairs event
 * loop groups with matching channel classes so callers never mix an epoll group with an NIO
 * channel. Use {@link #best()} for the process's choice, {@link #of(EventLoopGroup)} for a group
 * handed in. Constants are immutable and thread-safe.
 */
public enum NettyTransport {
  /** Linux native epoll (netty-transport-native-epoll). */
  EPOLL {
    @Override
    IoHandlerFactory ioHandlerFactory() {
      return EpollIoHandler.newFactory();
    }

    @Override
    public Class<? extends ServerSocketChannel> serverChannelType() {
      return EpollServerSocketChannel.class;
    }

    @Override
    public Class<? extends SocketChannel> channelType() {
      return EpollSocketChannel.class;
    }

    @Override
    public Class<? extends DatagramChannel> datagramChannelType() {
      return EpollDatagramChannel.class;
    }

    @Override
    public Class<? extends ServerChannel> serverDomainSocketChannelType() {
      return EpollServerDomainSocketChannel.class;
    }

    @Override
    public Class<? extends Channel> domainSocketChannelType() {
      return EpollDomainSocketChannel.class;
    }

    @Override
    public boolean isAvailable() {
      return Epoll.isAvailable();
    }

    @Override
    Throwable unavailabilityCause() {
      return Epoll.unavailabilityCause();
    }
  },

  /** Linux io_uring (netty-transport-native-io_uring): completions instead of readiness. */
  IO_URING {
    @Override
    IoHandlerFactory ioHandlerFactory() {
      return IoUringIoHandler.newFactory();
    }

    @Override
    public Class<? extends ServerSocketChannel> serverChannelType() {
      return IoUringServerSocketChannel.class;
    }

    @Override
    public Class<? extends SocketChannel> channelType() {
      return IoUringSocketChannel.class;
    }

    @Override
    public Class<? extends DatagramChannel> datagramChannelType() {
      return IoUringDatagramChannel.class;
    }

    @Override
    public Class<? extends ServerChannel> serverDomainSocketChannelType() {
      return IoUringServerDomainSocketChannel.class;
    }

    @Override
    public Class<? extends Channel> domainSocketChannelType() {
      return IoUringDomainSocketChannel.class;
    }

    @Override
    public boolean isAvailable() {
      return IoUring.isAvailable();
    }

    @Override
    Throwable unavailabilityCause() {
      return IoUring.unavailabilityCause();
    }
  },

  /**
   * The JDK's selector-based NIO; domain sockets through JDK 16+ {@code UnixDomainSocketAddress}.
   */
  NIO {
    @Override
    IoHandlerFactory ioHandlerFactory() {
      return NioIoHandler.newFactory();
    }

    @Override
    public Class<? extends ServerSocketChannel> serverChannelType() {
      return NioServerSocketChannel.class;
    }

    @Override
    public Class<? extends SocketChannel> channelType() {
      return NioSocketChannel.class;
    }

    @Override
    public Class<? extends DatagramChannel> datagramChannelType() {
      return NioDatagramChannel.class;
    }

    @Override
    public Class<? extends ServerChannel> serverDomainSocketChannelType() {
      return NioServerDomainSocketChannel.class;
    }

    @Override
    public Class<? extends Channel> domainSocketChannelType() {
      return NioDomainSocketChannel.class;
    }

    @Override
    public SocketAddress domainSocketAddress(Path path) {
      return UnixDomainSocketAddress.of(Objects.requireNonNull(path, "path"));
    }

    @Override
    public ByteBufAllocator allocator() {
      return NioAllocator.INSTANCE;
    }
  };

  private static final Logger log = LoggerFactory.getLogger(NettyTransport.class);

  /**
   * System property that picks the transport for every component: {@code nio}, {@code epoll} or
   * {@code io_uring}. Unset, see {@link #best()}, {@link #bestForHttp()} and {@link
   * #bestWithoutHalfClose()}.
   */
  public static final String TRANSPORT_PROPERTY = "portage.transport";

  /** Netty's system property that picks the process's default buffer allocator. */
  static final String ALLOCATOR_PROPERTY = "io.netty.allocator.type";

  /** NIO channels' allocator, decided once: pooled unless the process asked for an allocator. */
  private static final class NioAllocator {
    static final ByteBufAllocator INSTANCE = System.getProperty(ALLOCATOR_PROPERTY) == null
        ? PooledByteBufAllocator.DEFAULT
        : ByteBufAllocator.DEFAULT;
  }

  /** Decided once per class load: probing epoll loads a native library. */
  private static final class Best {
    static final NettyTransport INSTANCE = choose(System.getProperty(TRANSPORT_PROPERTY, "nio"));
  }

  /** The same, for HTTP proxies whose tests pass on io_uring. */
  private static final class BestForHttp {
    static final NettyTransport INSTANCE = chooseForHttp(System.getProperty(TRANSPORT_PROPERTY));
  }

  /** The same, for components whose channels never half-close. */
  private static final class BestWithoutHalfClose {
    static final NettyTransport INSTANCE = chooseWithoutHalfClose(System.getProperty(TRANSPORT_PROPERTY));
  }

  /**
   * The transport of the tunnel, the service proxy and the admin server: NIO unless {@code
   * -Dportage.transport} names another and it loads.
   *
   * <p>Not epoll, because Netty 4.2.18's epoll transport drops a socket from the epoll set once its
   * input is shut down and later fails the socket's first write that has to wait for {@code
   * EPOLLOUT} (epoll_ctl ENOENT): a half-closed relay then loses the rest of the data flowing
   * toward the side that finished sending ({@code EpollHalfCloseDefectTest} pins this; {@code
   * HalfCloseRelayTest} shows io_uring and NIO deliver it). The cause: {@code EpollIoHandler}'s
   * registration deletes the fd when its interest set becomes empty (input shut, no write waiting)
   * but keeps its state "added", so the next interest change is an {@code epoll_ctl(MOD)} on a
   * missing fd; the set empties again after every waiting write, so re-registering once does not
   * help. Nor does keeping the set non-empty (adding {@code EPOLLET} once the input ends): a peer
   * that finishes sending before the relay is attached (the service proxy attaches it after its
   * dial) has its socket read to the end by epoll's RDHUP handling even with {@code AUTO_READ} off,
   * so the input-shutdown event fires before any relay handler can act on it. Not io_uring yet:
   * the tunnel's flow-control and buffer-accounting tests fail on it.
   */
  public static NettyTransport best() {
    return Best.INSTANCE;
  }

  /**
   * The transport of the edge hub's HTTP proxy: io_uring where the kernel allows it and its native
   * library loads, else {@link #best()}'s NIO; {@code -Dportage.transport} names another. io_uring
   * hands a whole loop's reads and writes to the kernel at once, under one system call per proxied
   * request where epoll and NIO need about four: the hub relaying small HTTP responses spent about a
   * third less CPU per request on it (docs/benchmarks-l7.md). A kernel or container that forbids io_uring (a seccomp profile,
   * {@code kernel.io_uring_disabled}) makes Netty report it unavailable.
   */
  public static NettyTransport bestForHttp() {
    return BestForHttp.INSTANCE;
  }

  /**
   * The transport for a component none of whose channels ever half-closes ({@code
   * ALLOW_HALF_CLOSURE} stays off, so an end of input closes the channel; no {@link Relay}):
   * io_uring where it is available (see {@link #bestForHttp()}), else epoll where its native
   * library loads, else NIO; {@code -Dportage.transport} picks one. The epoll defect that keeps {@link
   * #best()} off epoll needs a socket whose input was shut down while the channel stays open, which
   * such a component never has.
   */
  public static NettyTransport bestWithoutHalfClose() {
    return BestWithoutHalfClose.INSTANCE;
  }

  static NettyTransport chooseForHttp(String requested) {
    return requested != null ? choose(requested) : firstAvailable("for HTTP", IO_URING, NIO);
  }

  static NettyTransport chooseWithoutHalfClose(String requested) {
    return requested != null
        ? choose(requested)
        : firstAvailable("without half-close", IO_URING, EPOLL, NIO);
  }

  /**
   * The first of {@code preference} (ending with NIO, always available) that works here, logged
   * once at INFO with why the ones before it do not.
   */
  private static NettyTransport firstAvailable(String use, NettyTransport... preference) {
    List<String> skipped = new ArrayList<>();
    for (NettyTransport t : preference) {
      if (t.isAvailable()) {
        log.info("Netty transport {}: {}{}", use, t.propertyValue(),
            skipped.isEmpty() ? "" : " (" + String.join("; ", skipped) + ")");
        return t;
      }
      // The cause as text: the line stays one line (a throwable argument prints its trace).
      skipped.add(t.propertyValue() + " unavailable: " + t.unavailabilityCause());
    }
    throw new IllegalStateException("no Netty transport available " + use);
  }

  /** The name {@link #TRANSPORT_PROPERTY} gives this transport: nio, epoll or io_uring. */
  private String propertyValue() {
    return name().toLowerCase(Locale.ROOT);
  }

  static NettyTransport choose(String requested) {
    switch (requested) {
      case "nio" -> {
        log.debug("Netty transport: nio");
        return NIO;
      }
      case "epoll" -> {
        return orNio(requested, EPOLL);
      }
      case "io_uring" -> {
        return orNio(requested, IO_URING);
      }
      default ->
          throw new IllegalArgumentException(
              TRANSPORT_PROPERTY + ": " + requested + " (expected: nio, epoll or io_uring)");
    }
  }

  /** {@code wanted} where it loads, else NIO with a warning: the process named it. */
  private static NettyTransport orNio(String requested, NettyTransport wanted) {
    if (wanted.isAvailable()) {
      log.debug("Netty transport: {}", requested);
      return wanted;
    }
    log.warn(
        "Netty transport: nio ({}={} but {} is unavailable)",
        TRANSPORT_PROPERTY,
        requested,
        requested,
        wanted.unavailabilityCause());
    return NIO;
  }

  /**
   * The transport whose channels can register with {@code group}, for callers handed a group they
   * did not create.
   *
   * @throws IllegalArgumentException if the group is neither an epoll nor an NIO I/O group
   */
  public static NettyTransport of(EventLoopGroup group) {
    Objects.requireNonNull(group, "group");
    if (group instanceof IoEventLoopGroup io) {
      if (io.isCompatible(EpollIoHandle.class)) {
        return EPOLL;
      }
      if (io.isCompatible(NioIoHandle.class)) {
        return NIO;
      }
      if (io.isCompatible(IoUringIoHandle.class)) {
        return IO_URING;
      }
    }
    throw new IllegalArgumentException(
        "group: "
            + group.getClass().getName()
            + " (expected: an epoll, io_uring or NIO MultiThreadIoEventLoopGroup)");
  }

  abstract IoHandlerFactory ioHandlerFactory();

  /** Whether this transport works here: its native library loads and the kernel allows it. */
  public boolean isAvailable() {
    return true;
  }

  /** Why {@link #isAvailable()} is false; null when it is true. */
  Throwable unavailabilityCause() {
    return null;
  }

  /**
   * A new event loop group of daemon threads named {@code threadNamePrefix-<group>-<n>}. The caller
   * owns it and must {@code shutdownGracefully()} it.
   *
   * @param threads number of event loops; 0 means Netty's default (2 x cores)
   */
  public EventLoopGroup newEventLoopGroup(int threads, String threadNamePrefix) {
    if (threads < 0) {
      throw new IllegalArgumentException("threads: " + threads + " (expected: >= 0)");
    }
    Objects.requireNonNull(threadNamePrefix, "threadNamePrefix");
    return new MultiThreadIoEventLoopGroup(
        threads, new DefaultThreadFactory(threadNamePrefix, true), ioHandlerFactory());
  }

  /** TCP listener channel class for {@code ServerBootstrap.channel(...)}. */
  public abstract Class<? extends ServerSocketChannel> serverChannelType();

  /** TCP client channel class for {@code Bootstrap.channel(...)}. */
  public abstract Class<? extends SocketChannel> channelType();

  /** UDP channel class. */
  public abstract Class<? extends DatagramChannel> datagramChannelType();

  /** Unix domain socket listener channel class. */
  public abstract Class<? extends ServerChannel> serverDomainSocketChannelType();

  /** Unix domain socket client channel class. */
  public abstract Class<? extends Channel> domainSocketChannelType();

  /**
   * The buffer allocator for this transport's TCP channels ({@code ChannelOption.ALLOCATOR}). NIO
   * reads and writes every buffer through a {@code ByteBuffer} view of it: Netty's pooled allocator
   * keeps one view per pooled buffer, while its adaptive allocator (Netty 4.2's default) makes a new
   * one on every read and write, about 240 bytes per request through the edge hub
   * (docs/benchmarks-l7.md). So NIO takes the pooled allocator; epoll and io_uring read and write
   * by address and keep Netty's default. When {@code -Dio.netty.allocator.type} is set, all take
   * what it asks for.
   */
  public ByteBufAllocator allocator() {
    return ByteBufAllocator.DEFAULT;
  }

  /**
   * The address of a Unix domain socket at {@code path} in the form this transport's domain socket
   * channels accept (the native transports and NIO use different address classes).
   */
  public SocketAddress domainSocketAddress(Path path) {
    return new DomainSocketAddress(Objects.requireNonNull(path, "path").toFile());
  }
}
