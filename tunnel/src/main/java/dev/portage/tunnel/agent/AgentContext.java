package dev.portage.tunnel.agent;

import dev.portage.core.time.TimeSource;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import java.util.concurrent.Executor;

/**
 * What every {@link ServerConnection} of one agent shares. Immutable.
 *
 * @param config the agent's configuration
 * @param time ticker for dial durations, scheduler for dial timeouts
 * @param metrics the agent's metrics
 * @param group event loops; each server connection and its backend sockets live on one of them
 * @param channelType socket channel class matching {@code group} (NIO or epoll)
 * @param sslContext client TLS context for the server connection, or null for plaintext
 * @param blockingExecutor runs blocking work (DNS lookups, token file reads) off the event loops
 */
record AgentContext(
    TunnelAgentConfig config,
    TimeSource time,
    AgentMetrics metrics,
    EventLoopGroup group,
    Class<? extends SocketChannel> channelType,
    SslContext sslContext,
    Executor blockingExecutor) {}
