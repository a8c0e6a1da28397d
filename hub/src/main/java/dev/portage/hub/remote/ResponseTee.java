package dev.portage.hub.remote;

import dev.portage.hub.cache.DiscoveryDocument;
import dev.portage.hub.cache.JsonObjectSplitter;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a 2xx response body into the cache while it streams to the client. A watch is split into
 * events as bytes arrive and each event is applied at once. A get or list body is not copied on the
 * event loop: the tee keeps retained slices of the relayed buffers and a running CRC32C; when the
 * answer ends, an answer identical to the one last stored (or queued) for the same request is
 * dropped at once, and any other is handed to the single writer thread, which copies and parses it
 * there (a body over the limit is not cached). The writer keeps events in order. Fed on the upstream
 * channel's event loop; not thread-safe. Owns the slices it keeps: released on every path.
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
  private final String discoveryAccept; // null unless the body is a discovery document
  private String contentType = "";
  private List<ByteBuf> parts; // retained slices of the body so far; null once handed on or dropped
  private int size;
  private final CRC32C crc;
  private boolean done;

  /**
   * @param discoveryAccept for a discovery document ({@link DiscoveryDocument}), the client's
   *     {@code Accept} ("" for none); null for a resource request
   */
  ResponseTee(RequestInfo info, ResponseCacher cacher, Executor writer, int maxBytes,
      LongAdder dropped, CacheBacklog backlog, String discoveryAccept) {
    this.info = info;
    this.discoveryAccept = discoveryAccept;
    this.cacher = cacher;
    this.writer = writer;
    this.maxBytes = maxBytes;
    this.dropped = dropped;
    this.backlog = backlog;
    if (info.resourceRequest() && info.isWatch()) {
      this.splitter = new JsonObjectSplitter(
          maxBytes, event -> submit(() -> cacher.applyWatchEvent(info, event), () -> { }));
    } else {
      this.splitter = null;
      this.parts = new ArrayList<>();
    }
    this.crc = new CRC32C();
  }

  /** The answer's {@code Content-Type} (kept with a discovery document); null for none. */
  void contentType(String type) {
    contentType = type == null ? "" : type.replace('\r', ' ').replace('\n', ' ');
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
    int n = content.readableBytes();
    if (n == 0) {
      return;
    }
    if ((long) size + n > maxBytes) {
      log.warn("not caching {}: response over {} bytes", info, maxBytes);
      dropped.increment();
      abort();
      return;
    }
    // A slice with its own indexes: the client's write advances the relayed buffer's reader index.
    if (content.nioBufferCount() == 1) {
      crc.update(content.nioBuffer(content.readerIndex(), n));
    } else {
      for (ByteBuffer b : content.nioBuffers(content.readerIndex(), n)) {
        crc.update(b);
      }
    }
    parts.add(content.retainedSlice());
    size += n;
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
    List<ByteBuf> body = parts;
    parts = null;
    int length = size;
    String request = discoveryAccept == null ? requestKey(info)
        : "discovery " + info.path() + " " + discoveryAccept;
    long fingerprint = CacheBacklog.fingerprint(crc.getValue(), length);
    if (backlog.isUnchanged(request, fingerprint)) {
      releaseAll(body);
      return;
    }
    if (!backlog.tryReserve(length)) {
      releaseAll(body);
      dropped.increment();
      log.debug("not caching {}: {} bytes already wait for the cache writer", info,
          backlog.pendingBytes());
      return;
    }
    // Queued: an identical answer arriving before the write is done is not queued again.
    backlog.stored(request, fingerprint);
    boolean list = info.verb().equals("list");
    String type = contentType;
    submit(() -> {
      try {
        byte[] bytes = copyAndRelease(body, length);
        long failuresBefore = cacher.cache().writeFailures();
        int stored;
        if (discoveryAccept != null) {
          DiscoveryDocument doc = new DiscoveryDocument(type, bytes);
          cacher.cache().putDiscovery(
              DiscoveryDocument.name(info.path(), doc.negotiated() ? discoveryAccept : ""), doc);
          stored = 1;
        } else {
          stored = list ? cacher.cacheList(info, bytes) : cacher.cacheObject(info, bytes) ? 1 : 0;
        }
        if (stored < 0 || cacher.cache().writeFailures() != failuresBefore) {
          backlog.forget(request, fingerprint);
        }
      } finally {
        releaseAll(body);
        backlog.release(length);
      }
    }, () -> {
      releaseAll(body);
      backlog.forget(request, fingerprint);
      backlog.release(length);
    });
  }

  /** One array with the bytes of {@code body} (on the writer thread); releases the slices. */
  private static byte[] copyAndRelease(List<ByteBuf> body, int length) {
    byte[] bytes = new byte[length];
    int at = 0;
    for (int i = 0; i < body.size(); i++) {
      ByteBuf b = body.get(i);
      int n = b.readableBytes();
      b.getBytes(b.readerIndex(), bytes, at, n);
      at += n;
      b.release();
      body.set(i, null);
    }
    return bytes;
  }

  private static void releaseAll(List<ByteBuf> body) {
    for (int i = 0; i < body.size(); i++) {
      ByteBuf b = body.get(i);
      if (b != null) {
        b.release();
        body.set(i, null);
      }
    }
  }

  /** Names a request for {@link CacheBacklog}: component, verb, path and the sorted query. */
  private static String requestKey(RequestInfo info) {
    return info.component() + " " + info.verb() + " " + info.path() + " "
        + new TreeMap<>(info.parameters());
  }

  /** The response broke off: a partial get or list is not stored (watch events already are). */
  void abort() {
    done = true;
    if (parts != null) {
      releaseAll(parts);
      parts = null;
    }
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
