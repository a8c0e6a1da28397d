package dev.portage.hub.remote;

import dev.portage.core.net.ScratchBytes;
import dev.portage.hub.cache.DiscoveryDocument;
import dev.portage.hub.cache.JsonObjectSplitter;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.codec.Encoding;
import dev.portage.hub.codec.WatchFrameSplitter;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import java.util.zip.GZIPInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies a 2xx response body into the cache while it streams to the client, JSON or Kubernetes
 * protobuf alike. A watch is split into events as bytes arrive (JSON objects, or length-prefixed
 * protobuf frames) and each event is applied at once. A get or list body is not copied on the
 * event loop: the tee keeps the relayed buffers retained and a running CRC32C; when the
 * answer ends, an answer identical to the one last stored (or queued) for the same request is
 * dropped at once, and any other is handed to the single writer thread, which copies and parses it
 * there (a body over the limit is not cached). The writer keeps events in order. Fed on the upstream
 * channel's event loop; not thread-safe. Owns the slices it keeps: released on every path.
 */
final class ResponseTee {

  private static final Logger log = LoggerFactory.getLogger(ResponseTee.class);

  /** Larger than most relayed reads; a larger one is checksummed in pieces. */
  static final int CHECKSUM_SCRATCH_SIZE = 8192;

  /** Per thread: the copy a direct buffer's bytes are checksummed from; nothing outlives a call. */
  private static final ScratchBytes CHECKSUM_SCRATCH = new ScratchBytes(CHECKSUM_SCRATCH_SIZE);

  private final RequestInfo info;
  private final ResponseCacher cacher;
  private final Executor writer;
  private final int maxBytes;
  private final LongAdder dropped;
  private final CacheBacklog backlog;
  private final String discoveryAccept; // null unless the body is a discovery document
  private Consumer<ByteBuf> splitter; // a watch's event splitter, set by start()
  private Encoding encoding = Encoding.JSON;
  private boolean gzip; // the body is gzip-compressed
  private String contentType = "";
  // The body so far, retained: the first buffer in fields (a pod arrives in one read, so most
  // answers need no list), any further ones in a list. Cleared once handed on or dropped.
  private boolean collecting;
  private ByteBuf firstBuf;
  private int firstIndex;
  private int firstLength;
  private List<Part> more;
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
    this.crc = new CRC32C();
  }

  /**
   * The answer's head arrived with this {@code Content-Type} (null for none): returns whether its
   * body is cached. Resources are cached in JSON or protobuf (not conversions such as {@code
   * ;as=Table}); discovery documents when JSON or negotiated for the client's {@code Accept}.
   */
  boolean start(String type, String contentEncoding) {
    contentType = type == null ? "" : type.replace('\r', ' ').replace('\n', ' ');
    Encoding e = Encoding.ofContentType(type);
    String coding = contentEncoding == null ? "" : contentEncoding.trim().toLowerCase(Locale.ROOT);
    // kube-apiserver gzips answers over 128 KiB for clients that accept it (client-go does):
    // such a get or list is unzipped by the writer; anything else encoded is not cached.
    gzip = coding.equals("gzip");
    if (!coding.isEmpty() && !coding.equals("identity")
        && !(gzip && !(info.resourceRequest() && info.isWatch()))) {
      done = true;
      return false;
    }
    if (discoveryAccept != null) {
      if (e != Encoding.JSON && !contentType.contains("apidiscovery.k8s.io")) {
        done = true;
        return false;
      }
    } else if (e == null) {
      done = true;
      return false;
    } else {
      encoding = e;
    }
    if (info.resourceRequest() && info.isWatch()) {
      Encoding events = encoding;
      Consumer<byte[]> apply =
          event -> submit(() -> cacher.applyWatchEvent(info, event, events), () -> { });
      if (encoding == Encoding.PROTOBUF) {
        WatchFrameSplitter frames = new WatchFrameSplitter(maxBytes, apply);
        splitter = frames::feed;
      } else {
        JsonObjectSplitter objects = new JsonObjectSplitter(maxBytes, apply);
        splitter = objects::feed;
      }
    } else {
      collecting = true;
    }
    return true;
  }

  /** Copies the readable bytes of {@code content} without consuming them. */
  void feed(ByteBuf content) {
    if (done) {
      return;
    }
    if (splitter != null) {
      splitter.accept(content);
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
    int from = content.readerIndex();
    checksum(crc, content, from, n);
    // The buffer itself, retained, with where its bytes were: the client's write moves its reader
    // index but never its bytes (a slice per chunk cost more than the rest of the tee).
    if (firstBuf == null) {
      firstBuf = content.retain();
      firstIndex = from;
      firstLength = n;
    } else {
      if (more == null) {
        more = new ArrayList<>(4);
      }
      more.add(new Part(content.retain(), from, n));
    }
    size += n;
  }

  /**
   * Adds bytes {@code [from, from + n)} of {@code content} to {@code crc}: a heap buffer's own array,
   * any other buffer copied through a per-thread array. An NIO view of a direct buffer is a new
   * object per call with Netty's adaptive allocator (6 % of the bytes the hub allocated per request
   * on io_uring); copying a body of a few hundred bytes costs less than that object.
   */
  static void checksum(CRC32C crc, ByteBuf content, int from, int n) {
    if (content.hasArray()) {
      crc.update(content.array(), content.arrayOffset() + from, n);
      return;
    }
    byte[] scratch = CHECKSUM_SCRATCH.get();
    for (int done = 0; done < n; ) {
      int piece = Math.min(scratch.length, n - done);
      content.getBytes(from + done, scratch, 0, piece);
      crc.update(scratch, 0, piece);
      done += piece;
    }
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
    int length = size;
    Object request = backlogKey(info, discoveryAccept);
    long fingerprint = CacheBacklog.fingerprint(crc.getValue(), length);
    if (backlog.isUnchanged(request, fingerprint)) {
      releaseCollected(); // the usual answer of a re-read object: no list, no task
      return;
    }
    List<Part> body = takeCollected();
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
    Encoding bodyEncoding = encoding;
    boolean zipped = gzip;
    submit(() -> {
      try {
        byte[] bytes = copyAndRelease(body, length);
        if (zipped) {
          bytes = gunzip(bytes);
          if (bytes == null) {
            return;
          }
        }
        long failuresBefore = cacher.cache().writeFailures();
        int stored;
        if (discoveryAccept != null) {
          DiscoveryDocument doc = new DiscoveryDocument(type, bytes);
          cacher.cache().putDiscovery(
              DiscoveryDocument.name(info.path(), doc.negotiated() ? discoveryAccept : ""), doc);
          stored = 1;
        } else {
          stored = list ? cacher.cacheList(info, bytes, bodyEncoding)
              : cacher.cacheObject(info, bytes, bodyEncoding) ? 1 : 0;
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

  /** Bytes {@code [index, index + length)} of a retained buffer. */
  private record Part(ByteBuf buf, int index, int length) {}

  /** The collected buffers as one list, for the writer; the tee holds none of them after. */
  private List<Part> takeCollected() {
    List<Part> body = new ArrayList<>(1 + (more == null ? 0 : more.size()));
    if (firstBuf != null) {
      body.add(new Part(firstBuf, firstIndex, firstLength));
      if (more != null) {
        body.addAll(more);
      }
    }
    firstBuf = null;
    more = null;
    collecting = false;
    return body;
  }

  /** Releases the collected buffers. */
  private void releaseCollected() {
    if (firstBuf != null) {
      firstBuf.release();
      firstBuf = null;
    }
    if (more != null) {
      releaseAll(more);
      more = null;
    }
    collecting = false;
  }

  /** The unzipped body, or null (logged, counted) if it is corrupt or unzips over the limit. */
  private byte[] gunzip(byte[] zipped) {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(zipped))) {
      byte[] out = in.readNBytes(maxBytes + 1);
      if (out.length > maxBytes) {
        log.warn("not caching {}: response unzips to over {} bytes", info, maxBytes);
        dropped.increment();
        return null;
      }
      return out;
    } catch (IOException e) {
      log.warn("not caching {}: gzip body is corrupt: {}", info, e.toString());
      dropped.increment();
      return null;
    }
  }

  /** One array with the bytes of {@code body} (on the writer thread); releases the buffers. */
  private static byte[] copyAndRelease(List<Part> body, int length) {
    byte[] bytes = new byte[length];
    int at = 0;
    for (int i = 0; i < body.size(); i++) {
      Part p = body.get(i);
      p.buf().getBytes(p.index(), bytes, at, p.length());
      at += p.length();
      p.buf().release();
      body.set(i, null);
    }
    return bytes;
  }

  private static void releaseAll(List<Part> body) {
    for (int i = 0; i < body.size(); i++) {
      Part p = body.get(i);
      if (p != null) {
        p.buf().release();
        body.set(i, null);
      }
    }
  }

  /**
   * Names a request for {@link CacheBacklog}, by value: equal for the same component, verb, path
   * and query (in any order). A resource request is named by its {@link RequestInfo} itself, which
   * is all of these and what they resolve to, so nothing is built per request; a discovery
   * document also by the client's {@code Accept}, which picks the document's form.
   */
  static Object backlogKey(RequestInfo info, String discoveryAccept) {
    return discoveryAccept == null ? info : new DiscoveryKey(info.path(), discoveryAccept);
  }

  /** The backlog key of a discovery document. */
  private record DiscoveryKey(String path, String accept) {}

  /** The response broke off: a partial get or list is not stored (watch events already are). */
  void abort() {
    done = true;
    if (collecting) {
      releaseCollected();
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
