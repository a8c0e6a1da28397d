package dev.portage.hub.remote;

import dev.portage.hub.cache.JsonObjectSplitter;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a 2xx response body into the cache while it streams to the client. A watch is split into
 * events as bytes arrive and each event is applied at once; a get or list body is collected and
 * stored when it ends (a body over the limit is not cached). Disk writes run on the single writer
 * executor, which keeps events in order. Fed on the upstream channel's event loop; not thread-safe.
 */
final class ResponseTee {

  private static final Logger log = LoggerFactory.getLogger(ResponseTee.class);

  private final RequestInfo info;
  private final ResponseCacher cacher;
  private final Executor writer;
  private final int maxBytes;
  private final LongAdder dropped;
  private final CacheBacklog backlog;
  private final JsonObjectSplitter splitter;
  private ByteArrayOutputStream body;
  private boolean done;

  ResponseTee(RequestInfo info, ResponseCacher cacher, Executor writer, int maxBytes,
      LongAdder dropped, CacheBacklog backlog) {
    this.info = info;
    this.cacher = cacher;
    this.writer = writer;
    this.maxBytes = maxBytes;
    this.dropped = dropped;
    this.backlog = backlog;
    if (info.isWatch()) {
      this.splitter = new JsonObjectSplitter(
          maxBytes, event -> submit(() -> cacher.applyWatchEvent(info, event), () -> { }));
    } else {
      this.splitter = null;
      this.body = new ByteArrayOutputStream();
    }
  }

  /** Copies the readable bytes of {@code content} without consuming them. */
  void feed(ByteBuf content) {
    if (done) {
      return;
    }
    if (splitter != null) {
      splitter.feed(content);
      return;
    }
    if (body.size() + content.readableBytes() > maxBytes) {
      log.warn("not caching {}: response over {} bytes", info, maxBytes);
      dropped.increment();
      done = true;
      body = null;
      return;
    }
    byte[] chunk = new byte[content.readableBytes()];
    content.getBytes(content.readerIndex(), chunk);
    body.write(chunk, 0, chunk.length);
  }

  /**
   * The response ended normally: queues a collected body for the writer, unless it is the very
   * answer last stored for this request or the writer's backlog is full.
   */
  void finish() {
    if (done) {
      return;
    }
    done = true;
    if (splitter != null) {
      return;
    }
    byte[] bytes = body.toByteArray();
    body = null;
    String request = requestKey(info);
    long fingerprint = CacheBacklog.fingerprint(bytes);
    if (backlog.isUnchanged(request, fingerprint)) {
      return;
    }
    if (!backlog.tryReserve(bytes.length)) {
      dropped.increment();
      log.debug("not caching {}: {} bytes already wait for the cache writer", info,
          backlog.pendingBytes());
      return;
    }
    boolean list = info.verb().equals("list");
    submit(() -> {
      try {
        long failuresBefore = cacher.cache().writeFailures();
        int stored = list ? cacher.cacheList(info, bytes) : cacher.cacheObject(info, bytes) ? 1 : 0;
        if (stored >= 0 && cacher.cache().writeFailures() == failuresBefore) {
          backlog.stored(request, fingerprint);
        } else {
          backlog.forget(request);
        }
      } finally {
        backlog.release(bytes.length);
      }
    }, () -> backlog.release(bytes.length));
  }

  /** Names a request for {@link CacheBacklog}: component, verb, path and the sorted query. */
  private static String requestKey(RequestInfo info) {
    return info.component() + " " + info.verb() + " " + info.path() + " "
        + new TreeMap<>(info.parameters());
  }

  /** The response broke off: a partial get or list is not stored (watch events already are). */
  void abort() {
    done = true;
    body = null;
  }

  private void submit(Runnable write, Runnable rejected) {
    try {
      writer.execute(() -> {
        try {
          write.run();
        } catch (RuntimeException e) {
          log.warn("caching {} failed", info, e);
        }
      });
    } catch (RejectedExecutionException e) {
      rejected.run();
      dropped.increment();
      log.warn("cache writer queue full or closed; not caching a response of {}", info);
    }
  }
}
