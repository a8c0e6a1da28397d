package dev.portage.core.http;

import io.netty.handler.codec.DefaultHeaders;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * The headers of a head {@link PlainHead} parsed, carrying the framing facts the parse saw so that
 * {@link HttpFraming}, {@link HopByHopHeaders} and {@link KeepAlive} need not look them up again:
 * the Content-Length, which hop-by-hop names occur, and the tokens of {@code Connection}. Every
 * mutator that can add, change or remove one of those names keeps the facts exact (a removal) or
 * marks them unknown (anything else), and then the callers look the headers up as before; so do
 * the iterators, whose entries can be changed or removed. Confined to one thread at a time, as
 * Netty's headers are.
 */
final class ParsedHeaders extends DefaultHttpHeaders {

  /** {@link #connectionTokens} bit: a {@code close} token. */
  static final int CLOSE = 1;

  /** {@link #connectionTokens} bit: a {@code keep-alive} token. */
  static final int KEEP_ALIVE = 2;

  /** {@link #connectionTokens} bit: a token naming some other header, to be stripped with it. */
  static final int OTHER = 4;

  /** {@link #facts} bit: the facts describe the headers. */
  private static final int KNOWN = 1 << 31;

  /** Where the Connection tokens sit in {@link #facts} (the hop-by-hop bits leave 8 to 28 free). */
  private static final int TOKENS_SHIFT = 8;

  private static final int TOKENS = 7 << TOKENS_SHIFT;

  /**
   * {@link #KNOWN}, the Connection tokens and the hop-by-hop bits in one int, and the length in
   * another (at most 9 digits): 8 bytes more per message instead of 24 as separate fields.
   */
  private int facts;

  private int contentLength = -1;

  ParsedHeaders(
      DefaultHeaders.NameValidator<CharSequence> names,
      DefaultHeaders.ValueValidator<CharSequence> values,
      int buckets) {
    super(names, values, buckets);
  }

  /** Adds a header the parse read, its facts recorded by {@link #parsed} at the end. */
  void addParsed(AsciiString name, String value) {
    super.add(name, value);
  }

  /** Records what the parse saw; the facts are known from here until a mutation says otherwise. */
  void parsed(int hopByHop, int connectionTokens, long contentLength) {
    this.facts = KNOWN | connectionTokens << TOKENS_SHIFT | hopByHop;
    this.contentLength = (int) contentLength;
  }

  /** Whether the facts below still describe these headers. */
  boolean known() {
    return facts < 0;
  }

  /** The {@link HopByHopHeaders} bits of the hop-by-hop names present. */
  int hopByHop() {
    return facts & ~(KNOWN | TOKENS);
  }

  /** {@link #CLOSE}, {@link #KEEP_ALIVE} and {@link #OTHER} as the Connection values hold them. */
  int connectionTokens() {
    return (facts & TOKENS) >>> TOKENS_SHIFT;
  }

  /** The Content-Length, or -1 when there is none. */
  long contentLength() {
    return contentLength;
  }

  /** The {@link #connectionTokens} bits of one Connection value (comma-separated, trimmed tokens). */
  static int tokens(CharSequence value) {
    int bits = 0;
    int n = value.length();
    int i = 0;
    while (i <= n) {
      int end = i;
      while (end < n && value.charAt(end) != ',') {
        end++;
      }
      int s = i;
      int e = end;
      while (s < e && value.charAt(s) <= ' ') {
        s++;
      }
      while (e > s && value.charAt(e - 1) <= ' ') {
        e--;
      }
      if (e > s) {
        bits |= token(value, s, e);
      }
      i = end + 1;
    }
    return bits;
  }

  private static int token(CharSequence value, int start, int end) {
    if (regionIs(value, start, end, "close")) {
      return CLOSE;
    }
    if (regionIs(value, start, end, "keep-alive")) {
      return KEEP_ALIVE;
    }
    return OTHER;
  }

  private static boolean regionIs(CharSequence value, int start, int end, String lower) {
    if (end - start != lower.length()) {
      return false;
    }
    for (int i = 0; i < lower.length(); i++) {
      char c = value.charAt(start + i);
      if (c >= 'A' && c <= 'Z') {
        c += 32;
      }
      if (c != lower.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** Adding or replacing a framing name: the facts are no longer known. */
  private void changing(CharSequence name) {
    if (known() && tracked(name)) {
      facts = 0;
    }
  }

  private static boolean tracked(CharSequence name) {
    return HopByHopHeaders.bitOf(name) != 0
        || AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.CONTENT_LENGTH);
  }

  @Override
  public HttpHeaders add(String name, Object value) {
    changing(name);
    return super.add(name, value);
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    changing(name);
    return super.add(name, value);
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    changing(name);
    return super.add(name, values);
  }

  @Override
  public HttpHeaders add(CharSequence name, Iterable<?> values) {
    changing(name);
    return super.add(name, values);
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    changing(name);
    return super.addInt(name, value);
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    changing(name);
    return super.addShort(name, value);
  }

  @Override
  public HttpHeaders add(HttpHeaders headers) {
    facts = 0;
    return super.add(headers);
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    changing(name);
    return super.set(name, value);
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    changing(name);
    return super.set(name, value);
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    changing(name);
    return super.set(name, values);
  }

  @Override
  public HttpHeaders set(CharSequence name, Iterable<?> values) {
    changing(name);
    return super.set(name, values);
  }

  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    changing(name);
    return super.setInt(name, value);
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    changing(name);
    return super.setShort(name, value);
  }

  @Override
  public HttpHeaders set(HttpHeaders headers) {
    facts = 0;
    return super.set(headers);
  }

  @Override
  public HttpHeaders setAll(HttpHeaders headers) {
    facts = 0;
    return super.setAll(headers);
  }

  @Override
  public HttpHeaders remove(String name) {
    removing(name);
    return super.remove(name);
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    removing(name);
    return super.remove(name);
  }

  /** A removal takes every value of the name: the facts stay exact (x-http2-* names share a bit). */
  private void removing(CharSequence name) {
    if (!known()) {
      return;
    }
    int bit = HopByHopHeaders.bitOf(name);
    if (bit == HopByHopHeaders.EXTENSION_BIT) {
      facts = 0;
    } else if (bit != 0) {
      facts &= ~bit;
      if (bit == HopByHopHeaders.CONNECTION_BIT) {
        facts &= ~TOKENS;
      }
    } else if (AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.CONTENT_LENGTH)) {
      contentLength = -1;
    }
  }

  @Override
  public HttpHeaders clear() {
    super.clear();
    if (known()) {
      facts = KNOWN;
      contentLength = -1;
    }
    return this;
  }

  // Entries and value iterators can change or remove what they hand out.

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    facts = 0;
    return super.iterator();
  }

  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    facts = 0;
    return super.iteratorCharSequence();
  }

  @Override
  public Iterator<String> valueStringIterator(CharSequence name) {
    changing(name);
    return super.valueStringIterator(name);
  }

  @Override
  public Iterator<CharSequence> valueCharSequenceIterator(CharSequence name) {
    changing(name);
    return super.valueCharSequenceIterator(name);
  }

  @Override
  public Set<String> names() {
    facts = 0;
    return super.names();
  }
}
