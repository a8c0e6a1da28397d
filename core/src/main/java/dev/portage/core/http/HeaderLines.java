package dev.portage.core.http;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * Positional access to the header lines of a message this package's codecs parsed, for a handler
 * that looks at every header of every request: a walk by position needs no iterator and no entry
 * object per line, where {@code iteratorCharSequence()} over parsed headers makes both (about 50
 * bytes per sidecar request). Other headers have no positions; walk them with their iterator.
 */
public final class HeaderLines {

  private HeaderLines() {}

  /** The number of header lines of {@code headers}, or -1 when they cannot be read by position. */
  public static int count(HttpHeaders headers) {
    return headers instanceof ParsedHeaders parsed ? parsed.size() : -1;
  }

  /** The name of line {@code i}, {@code 0 <= i < count(headers)}. */
  public static CharSequence name(HttpHeaders headers, int i) {
    return ((ParsedHeaders) headers).nameAt(i);
  }

  /** The value of line {@code i}, {@code 0 <= i < count(headers)}. */
  public static CharSequence value(HttpHeaders headers, int i) {
    return ((ParsedHeaders) headers).valueAt(i);
  }
}
