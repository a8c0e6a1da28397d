package dev.portage.bench.tunnel;

import io.netty.buffer.ByteBufAllocator;
import dev.portage.core.net.KeyExchangeGroup;
import io.netty.handler.ssl.OpenSslContextOption;
import io.netty.handler.ssl.OpenSslSession;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * A {@link Conn} over one TLS connection, as a client with a native TLS stack (curl, Go) makes it:
 * BoringSSL (netty-tcnative's {@link SSLEngine}) over a blocking socket, direct buffers, read and
 * decrypt on the caller's thread like {@link SocketConn}'s plain reads. {@link #drain()} counts the
 * decrypted bytes without copying them again. One user thread.
 *
 * <p>{@link Client#fullHandshake} makes every connection a full handshake (certificate, signature, key
 * exchange); {@link Client#resuming} keeps sessions in the client's cache, keyed by host and port, so
 * every connection after the first resumes (an abbreviated handshake) when the server allows it.
 */
final class TlsConn implements Conn {
  /** Plaintext decrypted per socket read at most: room for many 16 KiB records. */
  private static final int APP_BUFFER = 256 * 1024;

  private final SocketChannel socket;
  private final SSLEngine engine;
  private final ByteBuffer netIn = ByteBuffer.allocateDirect(APP_BUFFER + 32 * 1024);
  private final ByteBuffer netOut = ByteBuffer.allocateDirect(64 * 1024);
  /** Decrypted bytes not yet read, in read mode (position..limit). */
  private final ByteBuffer appIn = ByteBuffer.allocateDirect(APP_BUFFER).flip();
  private final In in = new In();
  private final OutputStream out = new BufferedOutputStream(new Out(), 4 * 1024);
  private boolean eof;

  /** A client TLS context trusting {@code ca}; shared by every connection it makes. Thread-safe. */
  static final class Client {
    private final SslContext context;

    private Client(Path ca, boolean resume, List<String> groups) throws SSLException {
      SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL)
          .trustManager(ca.toFile()).protocols("TLSv1.3", "TLSv1.2");
      if (!groups.isEmpty()) {
        builder.option(OpenSslContextOption.GROUPS,
            groups.stream().map(g -> KeyExchangeGroup.of(g).openSslName()).toArray(String[]::new));
      }
      this.context = builder.build();
      // The cache is keyed by the host and port each engine is created for (which the client's host
      // name check needs anyway): off, every connection is a full handshake.
      ((io.netty.handler.ssl.OpenSslSessionContext) context.sessionContext()).setSessionCacheEnabled(resume);
    }

    /**
     * Every connection does a full handshake (no client session cache), offering {@code groups} (any
     * name {@link KeyExchangeGroup#of} accepts; empty: BoringSSL's default, X25519MLKEM768 first).
     */
    static Client fullHandshake(Path ca, List<String> groups) throws SSLException {
      return new Client(ca, false, groups);
    }

    /** Connections resume the session of the previous one to the same port when the server agrees. */
    static Client resuming(Path ca, List<String> groups) throws SSLException {
      return new Client(ca, true, groups);
    }

    /** The key-exchange group one full handshake with {@code port} negotiates, as BoringSSL names it. */
    String negotiatedGroup(int port) throws IOException {
      try (TlsConn c = connect(port)) {
        return ((OpenSslSession) c.engine.getSession()).getNamedGroup();
      }
    }

    TlsConn connect(int port) throws IOException {
      SSLEngine engine = context.newEngine(ByteBufAllocator.DEFAULT, "localhost", port);
      engine.setUseClientMode(true);
      SocketChannel s = SocketChannel.open();
      try {
        s.setOption(StandardSocketOptions.TCP_NODELAY, true);
        s.socket().connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        TlsConn c = new TlsConn(s, engine);
        c.handshake();
        return c;
      } catch (IOException | RuntimeException e) {
        s.close();
        ReferenceCountUtil.release(engine);
        throw e;
      }
    }
  }

  private TlsConn(SocketChannel socket, SSLEngine engine) {
    this.socket = socket;
    this.engine = engine;
  }

  private void handshake() throws IOException {
    engine.beginHandshake();
    SSLEngineResult.HandshakeStatus hs = engine.getHandshakeStatus();
    while (hs != SSLEngineResult.HandshakeStatus.FINISHED && hs != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING) {
      switch (hs) {
        case NEED_WRAP -> hs = wrap(ByteBuffer.allocate(0)).getHandshakeStatus();
        case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
          SSLEngineResult r = unwrap();
          if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
            throw new SSLException("TLS handshake: the server closed the connection");
          }
          hs = r.getHandshakeStatus();
          // Read only when the engine still waits for the server and had nothing (whole) to take.
          if (hs == SSLEngineResult.HandshakeStatus.NEED_UNWRAP
              && (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW || r.bytesConsumed() == 0)) {
            readSocket();
          }
        }
        case NEED_TASK -> {
          for (Runnable t; (t = engine.getDelegatedTask()) != null; ) {
            t.run();
          }
          hs = engine.getHandshakeStatus();
        }
        default -> throw new SSLException("TLS handshake: unexpected state " + hs);
      }
    }
  }

  /** Encrypts all of {@code src} (or a handshake message when it is empty) and writes it to the socket. */
  private SSLEngineResult wrap(ByteBuffer src) throws IOException {
    SSLEngineResult r;
    do {
      netOut.clear();
      r = engine.wrap(src, netOut);
      netOut.flip();
      while (netOut.hasRemaining()) {
        socket.write(netOut);
      }
      if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
        break;
      }
    } while (src.hasRemaining());
    return r;
  }

  /** Decrypts what {@link #netIn} holds into {@link #appIn} (appended after its unread bytes). */
  private SSLEngineResult unwrap() throws SSLException {
    appIn.compact();
    netIn.flip();
    try {
      return engine.unwrap(netIn, appIn);
    } finally {
      netIn.compact();
      appIn.flip();
    }
  }

  private void readSocket() throws IOException {
    if (socket.read(netIn) < 0) {
      throw new EOFException("the server closed the connection");
    }
  }

  /** Decrypts until {@link #appIn} has bytes; false at the end of the stream (or close_notify). */
  private boolean fill() throws IOException {
    while (!appIn.hasRemaining()) {
      if (eof) {
        return false;
      }
      SSLEngineResult r = netIn.position() == 0 ? null : unwrap();
      if (r != null && r.getStatus() == SSLEngineResult.Status.CLOSED) {
        eof = true;
        continue;
      }
      if (r != null && r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
        wrap(ByteBuffer.allocate(0)); // e.g. a key update answer
      }
      if (appIn.hasRemaining()) {
        return true;
      }
      if (r == null || r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW || r.bytesConsumed() == 0) {
        if (socket.read(netIn) < 0) {
          eof = true;
        }
      }
      // else: a record without application data (a session ticket) was consumed; go on
    }
    return true;
  }

  @Override
  public InputStream in() {
    return in;
  }

  @Override
  public OutputStream out() {
    return out;
  }

  /** Counts the decrypted bytes up to the end of the stream without copying them out of the buffer. */
  @Override
  public long drain() throws IOException {
    long n = 0;
    while (fill()) {
      n += appIn.remaining();
      appIn.position(appIn.limit());
    }
    return n;
  }

  /** Sends close_notify (best effort) and closes the socket. */
  @Override
  public void close() throws IOException {
    try {
      engine.closeOutbound();
      wrap(ByteBuffer.allocate(0));
    } catch (IOException ignored) {
      // the server may have gone first
    } finally {
      socket.close();
      ReferenceCountUtil.release(engine);
    }
  }

  private final class In extends InputStream {
    @Override
    public int read() throws IOException {
      return fill() ? appIn.get() & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      int n = Math.min(len, appIn.remaining());
      appIn.get(b, off, n);
      return n;
    }
  }

  private final class Out extends OutputStream {
    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      wrap(ByteBuffer.wrap(b, off, len));
    }
  }
}
