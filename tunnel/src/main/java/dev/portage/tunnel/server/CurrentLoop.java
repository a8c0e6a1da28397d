package dev.portage.tunnel.server;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;

/** Finds the event loop of a group that the calling thread runs. */
final class CurrentLoop {

  private CurrentLoop() {}

  /** The loop of {@code loops} this thread runs, or null (none, or {@code loops} is null). */
  static EventLoop in(EventLoopGroup loops) {
    if (loops == null) {
      return null;
    }
    for (EventExecutor e : loops) {
      if (e.inEventLoop() && e instanceof EventLoop loop) {
        return loop;
      }
    }
    return null;
  }
}
