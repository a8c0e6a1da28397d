package dev.portage.core.http;

import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Shared constants for the header names HTTP servers and clients commonly send, found by their exact bytes in
 * a decoder's line buffer, so decoding a header line with such a name allocates no name (and the
 * name's hash, which the headers map needs, is computed once per process). Names are kept in the
 * spellings senders use (Go's and nginx's canonical case, and all lower case); any other spelling
 * is simply not found. Immutable and thread-safe.
 */
final class CommonHeaderNames {

  private static final String[] NAMES = {
    // nginx, Go's net/http and most servers, in canonical case
    "Date", "Server", "Content-Type", "Content-Length", "Connection", "Keep-Alive", "Last-Modified",
    "ETag", "Accept-Ranges", "Cache-Control", "Expires", "Vary", "Transfer-Encoding",
    "Content-Encoding", "Location", "Set-Cookie", "Pragma", "Age", "Via", "Trailer", "Upgrade",
    "Www-Authenticate", "Strict-Transport-Security", "X-Content-Type-Options",
    "Access-Control-Allow-Origin", "Retry-After",
    // the Kubernetes API server's own
    "Audit-Id", "X-Kubernetes-Pf-Flowschema-Uid", "X-Kubernetes-Pf-Prioritylevel-Uid",
    "Warning",
    // the same, as HTTP/2-era servers and proxies write them
    "date", "server", "content-type", "content-length", "connection", "keep-alive",
    "last-modified", "etag", "accept-ranges", "cache-control", "expires", "vary",
    "transfer-encoding", "content-encoding", "location", "set-cookie",
    // what clients send (curl, wrk, browsers, Go's net/http, Kubernetes clients), both spellings
    "Host", "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Authorization",
    "Cookie", "Referer", "Origin", "If-None-Match", "If-Modified-Since", "X-Forwarded-For",
    "X-Forwarded-Proto", "X-Request-Id", "Expect", "Te", "Traceparent", "Content-Md5",
    "host", "user-agent", "accept", "accept-encoding", "accept-language", "authorization",
    "cookie", "referer", "origin", "if-none-match", "if-modified-since", "x-forwarded-for",
    "x-forwarded-proto", "x-request-id", "expect", "te", "traceparent",
    // more answers: ranges, conditional and CORS headers
    "Content-Range", "Content-Disposition", "Content-Language", "Link", "Allow",
    "X-Frame-Options", "X-Xss-Protection", "Referrer-Policy", "Content-Security-Policy",
    "Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
    "Access-Control-Allow-Methods", "Access-Control-Expose-Headers", "X-Request-ID",
    "grpc-status", "grpc-message", "age", "via", "trailer", "upgrade", "www-authenticate",
    "strict-transport-security", "x-content-type-options", "access-control-allow-origin",
    "retry-after", "audit-id", "warning", "x-envoy-upstream-service-time", "l5d-dst-override",
  };

  private static final int MAX_LENGTH = 64;

  /** By length, then by first byte: the candidates (usually one or two) to compare in full. */
  private static final AsciiString[][] BY_LENGTH = new AsciiString[MAX_LENGTH][];

  static {
    List<List<AsciiString>> byLength = new ArrayList<>();
    for (int i = 0; i < MAX_LENGTH; i++) {
      byLength.add(new ArrayList<>());
    }
    for (String name : NAMES) {
      AsciiString s = AsciiString.cached(name);
      s.hashCode(); // computed now, once
      if (!byLength.get(name.length()).contains(s)) {
        byLength.get(name.length()).add(s);
      }
    }
    for (int i = 0; i < MAX_LENGTH; i++) {
      List<AsciiString> l = byLength.get(i);
      BY_LENGTH[i] = l.isEmpty() ? null : l.toArray(AsciiString[]::new);
    }
  }

  private CommonHeaderNames() {}

  /** The shared name whose bytes are {@code sb[start, start + length)}, or null. */
  static AsciiString find(byte[] sb, int start, int length) {
    if (length <= 0 || length >= MAX_LENGTH) {
      return null;
    }
    AsciiString[] candidates = BY_LENGTH[length];
    if (candidates == null) {
      return null;
    }
    for (AsciiString c : candidates) {
      if (matches(c, sb, start, length)) {
        return c;
      }
    }
    return null;
  }

  /** Whether {@code sb[start, start + length)} holds exactly the bytes of {@code s}. */
  static boolean matches(AsciiString s, byte[] sb, int start, int length) {
    if (s.length() != length) {
      return false;
    }
    int off = s.arrayOffset();
    return Arrays.equals(s.array(), off, off + length, sb, start, start + length);
  }
}
