package dev.portage.proxy.service;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.Ticker;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What every service listener of one proxy shares: the I/O threads, the clock, the metrics, the dial
 * timeouts, the read sizing of relayed sockets (shared: it hands each channel its own handle) and
 * the set of live connections (the one map of connections; it empties as they close).
 */
record ListenerContext(
    NettyTransport transport,
    EventLoopGroup group,
    Ticker ticker,
    ServiceProxyMetrics metrics,
    List<Duration> dialTimeouts,
    RecvByteBufAllocator reads,
    Set<ProxiedConnection> live) {}
