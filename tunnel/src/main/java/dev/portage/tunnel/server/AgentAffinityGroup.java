package dev.portage.tunnel.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The child group of the HTTP CONNECT listener and the gRPC frontend server: registers each accepted
 * socket on the event loop of
 * an agent stream when one is connected ({@link BackendRegistry#preferredLoop()}), else on any loop
 * of the server's group. A tunnel whose socket shares its agent stream's thread moves every packet
 * (DIAL_REQ, DIAL_RSP, DATA both ways, credit) without a cross-thread wake-up, which is most of a
 * dial's latency on a busy machine. Only a view: lifecycle calls go to the server's group, which owns
 * the threads. Thread-safe.
 */
final class AgentAffinityGroup extends AbstractEventExecutorGroup implements EventLoopGroup {
  private final EventLoopGroup delegate;
  private final Supplier<EventLoop> preferred;

  AgentAffinityGroup(EventLoopGroup delegate, Supplier<EventLoop> preferred) {
    this.delegate = delegate;
    this.preferred = preferred;
  }

  @Override
  public EventLoop next() {
    EventLoop loop = preferred.get();
    return loop != null && !loop.isShuttingDown() ? loop : delegate.next();
  }

  @Override
  public ChannelFuture register(Channel channel) {
    return next().register(channel);
  }

  @Override
  public ChannelFuture register(ChannelPromise promise) {
    return next().register(promise);
  }

  @Deprecated
  @Override
  public ChannelFuture register(Channel channel, ChannelPromise promise) {
    return next().register(channel, promise);
  }

  @Override
  public Iterator<EventExecutor> iterator() {
    return delegate.iterator();
  }

  @Override
  public boolean isShuttingDown() {
    return delegate.isShuttingDown();
  }

  @Override
  public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
    return delegate.shutdownGracefully(quietPeriod, timeout, unit);
  }

  @Override
  public Future<?> terminationFuture() {
    return delegate.terminationFuture();
  }

  @Deprecated
  @Override
  public void shutdown() {
    delegate.shutdown();
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }
}
