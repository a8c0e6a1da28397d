package dev.portage.tunnel.agent;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.internal.ReceiveCredit;
import dev.portage.tunnel.internal.SendCredit;
import java.util.ArrayDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One dialed backend socket of a {@link ServerConnection}, identified there by its connectID, and
 * the pipeline handler of that socket.
 *
 * <p>Server → backend: DATA payloads go straight to the socket while it is writable; beyond that they
 * wait in this connection's own queue. With negotiated Portage flow control the server never has more
 * than its window (plus one packet) unacknowledged, and every payload written to the socket is granted
 * back through the owner; a server that overshoots {@link FlowControl#receiveLimit()} breaks the
 * protocol and the connection is closed. Without it (upstream servers) the queue holds at most {@code
 * --xfr-channel-size} packets and a full queue is reported to the owner, which closes this connection
 * alone: the server stream's receive loop never waits for one backend. Backend → server: the socket
 * has auto-read off and the owner calls {@link #read()} only while the server stream is ready and,
 * with flow control, while this connection has send credit left.
 *
 * <p>Threading: everything runs on the socket's event loop, which is the owner's event loop. Owns the
 * queued buffers and releases them when the socket closes; passes each read buffer to the owner, which
 * releases it.
 */
final class BackendConnection extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(BackendConnection.class);

  private final ServerConnection owner;
  private final long connectId;
  private final String address;
  private final Channel channel;
  private final int queueLimit;
  private final FlowControl flow;
  private final SendCredit sendCredit;
  private final ReceiveCredit receiveCredit;
  private final ArrayDeque<ByteBuf> queue = new ArrayDeque<>();
  private long queuedBytes;
  private boolean readWanted;
  private boolean creditPaused;

  /** With {@code flow} null the connection follows the overflow rule with {@code queueLimit} packets. */
  BackendConnection(
      ServerConnection owner, long connectId, String address, Channel channel, int queueLimit, FlowControl flow) {
    this.owner = owner;
    this.connectId = connectId;
    this.address = address;
    this.channel = channel;
    this.queueLimit = queueLimit;
    this.flow = flow;
    this.sendCredit = flow == null ? null : new SendCredit(flow.sendWindow());
    this.receiveCredit = flow == null ? null : new ReceiveCredit(flow.receiveWindow());
  }

  /** The send credit toward the server, or null without negotiated flow control. */
  SendCredit sendCredit() {
    return sendCredit;
  }

  /** Bytes received from the server and not yet written to the backend socket. */
  long queuedBytes() {
    return queuedBytes;
  }

  boolean creditPaused() {
    return creditPaused;
  }

  void creditPaused(boolean paused) {
    creditPaused = paused;
  }

  long connectId() {
    return connectId;
  }

  String address() {
    return address;
  }

  Channel channel() {
    return channel;
  }

  /** Packets waiting for the socket to become writable. */
  int queued() {
    return queue.size();
  }

  /**
   * Hands one DATA payload to the socket. Returns false, taking nothing, when the queue is full (no
   * flow control) or the server sent beyond its window (flow control).
   */
  boolean offer(ByteString data) {
    if (!channel.isActive()) {
      return true; // closing; the close path reports it
    }
    if (data.isEmpty()) {
      return true;
    }
    if (flow != null && queuedBytes + data.size() > flow.receiveLimit()) {
      return false;
    }
    if (queue.isEmpty() && channel.isWritable()) {
      queuedBytes += data.size();
      owner.queued(queuedBytes);
      write(toBuf(data)).flush();
      return true;
    }
    if (flow == null && queue.size() >= queueLimit) {
      return false;
    }
    queuedBytes += data.size();
    owner.queued(queuedBytes);
    queue.add(toBuf(data));
    return true;
  }

  /** Writes {@code buf}; once the socket took it, its bytes are granted back to the server. */
  private Channel write(ByteBuf buf) {
    int size = buf.readableBytes();
    channel.write(buf).addListener(f -> {
      if (!f.isSuccess()) {
        channel.close();
        return;
      }
      queuedBytes -= size;
      if (receiveCredit != null) {
        long grant = receiveCredit.written(size);
        if (grant > 0) {
          owner.grantCredit(this, grant);
        }
      }
    });
    return channel;
  }

  /** Asks the socket for one more chunk; the owner calls this only while the server stream is ready. */
  void read() {
    readWanted = false;
    channel.read();
  }

  /** Marks that this connection waits for the server stream to become ready; false if it already was. */
  boolean markReadWanted() {
    if (readWanted) {
      return false;
    }
    readWanted = true;
    return true;
  }

  boolean readWanted() {
    return readWanted;
  }

  /** Closes at once, dropping queued data. */
  void close() {
    channel.close();
  }

  /**
   * Closes after everything queued for the backend was written: a server that sends DATA and then
   * CLOSE_REQ expects the data to arrive. The caller bounds how long a backend that stops reading may
   * hold the socket open.
   */
  void closeAfterFlush() {
    ByteBuf b;
    while ((b = queue.poll()) != null) {
      write(b);
    }
    channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    owner.onBackendData(this, (ByteBuf) msg);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    boolean wrote = false;
    while (!queue.isEmpty() && channel.isWritable()) {
      write(queue.poll());
      wrote = true;
    }
    if (wrote) {
      channel.flush();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    ByteBuf b;
    while ((b = queue.poll()) != null) {
      b.release();
    }
    owner.onBackendClosed(this);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("connect {} => {}: backend socket error, closing", connectId, address, cause);
    ctx.close();
  }

  private static ByteBuf toBuf(ByteString data) {
    return Unpooled.wrappedBuffer(data.asReadOnlyByteBuffer());
  }

  @Override
  public String toString() {
    return "connect " + connectId + " => " + address;
  }
}
