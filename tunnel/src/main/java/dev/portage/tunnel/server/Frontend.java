package dev.portage.tunnel.server;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;

/**
 * One client-side connection (a gRPC {@code Proxy} stream or an HTTP {@code CONNECT} socket) as the
 * {@link PacketRouter} sees it. The router calls these from an agent stream's receive thread or a timer
 * thread; implementations hand the work to their own serial executor and never block.
 */
interface Frontend {

  /** The agent accepted dial {@code random}; the router already filed it as {@code connectID} on {@code backend}. */
  void dialEstablished(Backend backend, long random, long connectID);

  /** Dial {@code random} failed; the router already removed it. {@code error} is the client-facing text. */
  void dialFailed(long random, String error);

  /** Bytes from the agent for this connection; must not block (see {@link ReceiveBudget}). */
  void deliver(ByteString data);

  /**
   * {@link #deliver(ByteString)} for a payload in a (direct) buffer the frontend takes over: it releases
   * {@code payload} exactly once on every path (written, dropped, or thrown); must not block.
   */
  void deliver(ByteBuf payload);

  /**
   * The agent granted {@code bytes} more send credit (Portage flow control, {@code PORTAGE_WINDOW_UPDATE});
   * the frontend validates it and resumes reading its client if it was paused.
   */
  void creditGranted(long bytes);

  /** The agent closed the connection or its stream was lost; the router already removed it. */
  void closedByAgent(long connectID, String error);
}
