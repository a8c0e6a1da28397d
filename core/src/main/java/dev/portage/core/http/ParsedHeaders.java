package dev.portage.core.http;

import io.netty.handler.codec.CharSequenceValueConverter;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.DefaultHeaders;
import io.netty.handler.codec.HeadersUtils;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.AbstractCollection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Collections;
import java.util.Date;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;

/**
 * The headers of a head {@link PlainHead} parsed: names and values interleaved in one array in
 * insertion order, no object per header (Netty's {@code DefaultHttpHeaders} allocates an entry of
 * six fields per header plus a hash table, about a third of the sidecar's bytes per request), and
 * the framing facts the parse saw, so that {@link HttpFraming}, {@link HopByHopHeaders} and {@link
 * KeepAlive} need not look them up again: the Content-Length, which hop-by-hop names occur, and the
 * tokens of {@code Connection}.
 *
 * <p>Every public method answers as Netty's {@code DefaultHttpHeaders} from {@code
 * DefaultHttpHeadersFactory.headersFactory().withNameValidation(false)} does (names compared ASCII
 * case-blind, {@code get} the first value, value iterators newest first, entries changeable but not
 * removable, Netty's value check on every value added after the parse), with two deliberate
 * exceptions: {@link #copy} returns headers of this class that keep checking values (Netty's copy
 * stops checking them), and {@link #equals} holds only between instances of this class. A head has
 * a handful of headers, so lookups scan the array. Every change that adds or alters one of the
 * tracked names marks the facts unknown (except a {@code set} of one plain digit Content-Length,
 * which keeps them exact), a removal keeps them exact, and then the callers look the headers up as
 * before. Headers parsed from a block that repeats carry its written form ({@link HeaderWire}) for
 * as long as they equal it, whole or stripped; any other change drops it. Confined to one thread at
 * a time, as Netty's headers are.
 */
final class ParsedHeaders extends HttpHeaders {

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

  /** Netty's check of a header value, as its default headers factory applies it. */
  private static final DefaultHeaders.ValueValidator<CharSequence> VALUE_CHECK =
      DefaultHttpHeadersFactory.headersFactory().getValueValidator();

  private static final CharSequenceValueConverter CONVERTER = CharSequenceValueConverter.INSTANCE;

  private static final CharSequence[] NONE = {};

  /** Header i's name at {@code 2 * i}, its value at {@code 2 * i + 1}; null past {@link #size}. */
  private CharSequence[] kv;

  private int size;

  /**
   * Counts the changes that can move a header to another index (removals): an entry handed out
   * before one no longer writes through, as Netty's entries of removed headers do not.
   */
  private int moves;

  /**
   * {@link #KNOWN}, the Connection tokens and the hop-by-hop bits in one int, and the length in
   * another (at most 9 digits).
   */
  private int facts;

  private int contentLength = -1;

  /**
   * Bit i (i < 64): value i is a String whose chars are all below 256 (the parse made it from
   * bytes), so an encoder may copy its chars as bytes in one go. Bits at and above {@link #size}
   * are 0; the bits move with the headers when some are removed.
   */
  private long latin1;

  /**
   * The written form of the block these headers were parsed from, when {@link PlainHead} saw it
   * repeat; null otherwise. {@link #wireForm} says which of its forms the headers still equal.
   */
  private HeaderWire wire;

  /** {@link #WHOLE}, {@link #STRIPPED}, or 0 once any change made the headers differ from both. */
  private byte wireForm;

  /** {@link #wireForm}: the headers are as parsed. */
  static final byte WHOLE = 1;

  /** {@link #wireForm}: the headers are as parsed less the hop-by-hop ones (toward HTTP/1.1). */
  static final byte STRIPPED = 2;

  /** Empty headers; their facts are known (there are none). */
  ParsedHeaders() {
    this(NONE, 0, 0, 0, -1, 0);
  }

  /**
   * The {@code size} headers in {@code kv} (which these headers now own) as a parse found them,
   * with what it saw of them: the values already passed a check stricter than Netty's, and those
   * with their bit set in {@code latin1} are Strings of chars below 256.
   */
  ParsedHeaders(CharSequence[] kv, int size, int hopByHop, int connectionTokens, long contentLength,
      long latin1) {
    this.kv = kv;
    this.size = size;
    this.facts = KNOWN | connectionTokens << TOKENS_SHIFT | hopByHop;
    this.contentLength = (int) contentLength;
    this.latin1 = latin1 & below(size);
  }

  private ParsedHeaders(ParsedHeaders from) {
    // One slot more: a copy is usually made to add a framing header.
    this.kv = Arrays.copyOf(from.kv, 2 * from.size + 2);
    this.size = from.size;
    this.facts = from.facts;
    this.contentLength = from.contentLength;
    this.latin1 = from.latin1;
  }

  /** The {@link #latin1} bits of indexes below {@code i}. */
  static long below(int i) {
    return i >= 64 ? -1L : (1L << i) - 1;
  }

  // The written form.

  /** Attaches the written form of the block these headers were just parsed from, unchanged. */
  void wire(HeaderWire wire) {
    this.wire = wire;
    this.wireForm = WHOLE;
  }

  /** Which form of the parsed block the headers still equal ({@link #WHOLE}, {@link #STRIPPED}), or 0. */
  byte wireForm() {
    return wireForm;
  }

  /**
   * After {@link HopByHopHeaders#strip} toward HTTP/1.1 on headers that were in {@code before}'s
   * form: they now equal the stripped form (the strip is the one the form was made with).
   */
  void stripped(byte before) {
    wireForm = before == 0 ? 0 : STRIPPED;
  }

  /** The header lines as {@link HeadWriter} would write them now, or null when not known. */
  byte[] wireBytes() {
    return switch (wireForm) {
      case WHOLE -> wire.whole;
      case STRIPPED -> wire.stripped;
      default -> null;
    };
  }

  // The framing facts.

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

  /** Header {@code i}'s name, {@code 0 <= i < size()}: for walks that need no entry objects. */
  CharSequence nameAt(int i) {
    return kv[2 * i];
  }

  /** Header {@code i}'s value, {@code 0 <= i < size()}. */
  CharSequence valueAt(int i) {
    return kv[2 * i + 1];
  }

  /** Whether header {@code i}'s value is a String of chars below 256 only (see {@link #latin1}). */
  boolean latin1At(int i) {
    return i < 64 && (latin1 >>> i & 1) != 0;
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

  /** Adding or changing a value of a framing name: the facts are no longer known. */
  private void changing(CharSequence name) {
    if (known() && tracked(name)) {
      facts = 0;
    }
  }

  private static boolean tracked(CharSequence name) {
    return HopByHopHeaders.bitOf(name) != 0 || isContentLength(name);
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
    } else if (isContentLength(name)) {
      contentLength = -1;
    }
  }

  // Storage.

  private static boolean sameName(CharSequence a, CharSequence b) {
    // Lengths first: most names in a scan differ in length, and Netty's comparison checks types
    // before it gets to the length.
    return a == b || a.length() == b.length() && AsciiString.contentEqualsIgnoreCase(a, b);
  }

  /**
   * Whether the facts say no header is called {@code name}, for the framing names Netty's encoders
   * and {@link HttpFraming} ask about on every message (by identity: Netty's constants). Answers
   * without a scan what is nearly always "absent": Transfer-Encoding on a message with a length.
   */
  private boolean knownAbsent(CharSequence name) {
    if (facts >= 0) {
      return false;
    }
    if (name == HttpHeaderNames.TRANSFER_ENCODING) {
      return (facts & HopByHopHeaders.TRANSFER_ENCODING_BIT) == 0;
    }
    if (name == HttpHeaderNames.CONTENT_LENGTH) {
      return contentLength < 0;
    }
    return name == HttpHeaderNames.CONNECTION && (facts & HopByHopHeaders.CONNECTION_BIT) == 0;
  }

  /** The index of the first header called {@code name}, or -1. */
  private int indexOf(CharSequence name) {
    if (knownAbsent(name)) {
      return -1;
    }
    CharSequence[] a = kv;
    for (int i = 0, n = size; i < n; i++) {
      if (sameName(name, a[2 * i])) {
        return i;
      }
    }
    return -1;
  }

  private CharSequence first(CharSequence name) {
    Objects.requireNonNull(name, "name");
    int i = indexOf(name);
    return i < 0 ? null : kv[2 * i + 1];
  }

  private void append(CharSequence name, CharSequence value) {
    changing(name);
    int at = 2 * size;
    if (at == kv.length) {
      kv = Arrays.copyOf(kv, Math.max(8, 2 * kv.length));
    }
    kv[at] = name;
    kv[at + 1] = value;
    wireForm = 0;
    size++; // its latin1 bit is 0, as every bit at and above the old size was
  }

  /** Removes every header called {@code name}, keeping the others in order. */
  private void removeAll(CharSequence name) {
    CharSequence[] a = kv;
    int w = 0;
    long kept = 0;
    for (int r = 0, n = size; r < n; r++) {
      CharSequence key = a[2 * r];
      if (sameName(name, key)) {
        continue;
      }
      if (w != r) {
        a[2 * w] = key;
        a[2 * w + 1] = a[2 * r + 1];
      }
      if (latin1At(r) && w < 64) {
        kept |= 1L << w;
      }
      w++;
    }
    latin1 = kept;
    if (w != size) {
      Arrays.fill(a, 2 * w, 2 * size, null);
      size = w;
      moves++;
      wireForm = 0;
    }
  }

  private void removeAt(int i) {
    if (i < 64) {
      latin1 = latin1 & below(i) | latin1 >>> 1 & ~below(i);
    }
    System.arraycopy(kv, 2 * i + 2, kv, 2 * i, 2 * (size - i - 1));
    size--;
    kv[2 * size] = null;
    kv[2 * size + 1] = null;
    moves++;
    wireForm = 0;
  }

  /** Netty's value check, its failure named as Netty names it. */
  private static void check(CharSequence name, CharSequence value) {
    try {
      VALUE_CHECK.validate(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Validation failed for header '" + name + "'", e);
    }
  }

  /** An object value as Netty's headers convert it: char sequences kept, dates as HTTP dates. */
  private static CharSequence convert(Object value) {
    Objects.requireNonNull(value, "value");
    if (value instanceof CharSequence s) {
      return s;
    }
    if (value instanceof Date date) {
      return DateFormatter.format(date);
    }
    if (value instanceof Calendar calendar) {
      return DateFormatter.format(calendar.getTime());
    }
    return value.toString();
  }

  private void addValue(CharSequence name, CharSequence value) {
    Objects.requireNonNull(name, "name");
    check(name, value);
    Objects.requireNonNull(value, "value");
    append(name, value);
  }

  private void setValue(CharSequence name, CharSequence value) {
    Objects.requireNonNull(name, "name");
    check(name, value);
    Objects.requireNonNull(value, "value");
    int before = facts;
    int length = known() && isContentLength(name) ? plainLength(value) : -1;
    removeAll(name);
    append(name, value);
    if (length >= 0) {
      // One plain length in place of any other (a relay setting its body's length, as the hub
      // does on every forwarded GET): the facts stay exact, so the encoder's framing questions
      // are still answered without a scan. Content-Length is not hop-by-hop: no other fact moves.
      facts = before;
      contentLength = length;
    }
  }

  private static boolean isContentLength(CharSequence name) {
    return name == HttpHeaderNames.CONTENT_LENGTH
        || AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.CONTENT_LENGTH);
  }

  /** The value as a length if it is 1 to 9 ASCII digits (what a parse records), else -1. */
  private static int plainLength(CharSequence value) {
    int n = value.length();
    if (n == 0 || n > 9) {
      return -1;
    }
    int length = 0;
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      length = length * 10 + c - '0';
    }
    return length;
  }

  private void setValues(CharSequence name, Iterable<?> values) {
    Objects.requireNonNull(name, "name");
    removing(name);
    removeAll(name);
    for (Object v : values) {
      if (v == null) {
        break;
      }
      CharSequence value = convert(v);
      check(name, value);
      append(name, value);
    }
  }

  // Lookups.

  @Override
  public String get(String name) {
    return get((CharSequence) name);
  }

  @Override
  public String get(CharSequence name) {
    CharSequence v = first(name);
    return v == null ? null : v.toString();
  }

  @Override
  public Integer getInt(CharSequence name) {
    CharSequence v = first(name);
    try {
      return v == null ? null : CONVERTER.convertToInt(v);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public int getInt(CharSequence name, int defaultValue) {
    Integer v = getInt(name);
    return v != null ? v : defaultValue;
  }

  @Override
  public Short getShort(CharSequence name) {
    CharSequence v = first(name);
    try {
      return v == null ? null : CONVERTER.convertToShort(v);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public short getShort(CharSequence name, short defaultValue) {
    Short v = getShort(name);
    return v != null ? v : defaultValue;
  }

  @Override
  public Long getTimeMillis(CharSequence name) {
    CharSequence v = first(name);
    try {
      // A value that is no date escapes as Netty's ParseException, as from Netty's headers.
      return v == null ? null : CONVERTER.convertToTimeMillis(v);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public long getTimeMillis(CharSequence name, long defaultValue) {
    Long v = getTimeMillis(name);
    return v != null ? v : defaultValue;
  }

  @Override
  public List<String> getAll(String name) {
    return getAll((CharSequence) name);
  }

  @Override
  public List<String> getAll(CharSequence name) {
    Objects.requireNonNull(name, "name");
    List<String> values = null;
    for (int i = 0; i < size; i++) {
      if (sameName(name, kv[2 * i])) {
        if (values == null) {
          values = new ArrayList<>(2);
        }
        values.add(kv[2 * i + 1].toString());
      }
    }
    return values == null ? Collections.emptyList() : Collections.unmodifiableList(values);
  }

  /** The values of {@code name} as stored, in insertion order. */
  private List<CharSequence> stored(CharSequence name) {
    List<CharSequence> values = new ArrayList<>(2);
    for (int i = 0; i < size; i++) {
      if (sameName(name, kv[2 * i])) {
        values.add(kv[2 * i + 1]);
      }
    }
    return values;
  }

  @Override
  public List<Map.Entry<String, String>> entries() {
    if (isEmpty()) {
      return Collections.emptyList();
    }
    List<Map.Entry<String, String>> all = new ArrayList<>(size);
    for (Iterator<Map.Entry<String, String>> it = iterator(); it.hasNext(); ) {
      all.add(it.next());
    }
    return all;
  }

  @Override
  public boolean contains(String name) {
    return contains((CharSequence) name);
  }

  @Override
  public boolean contains(CharSequence name) {
    return first(name) != null;
  }

  @Override
  public boolean contains(String name, String value, boolean ignoreCase) {
    return contains((CharSequence) name, value, ignoreCase);
  }

  @Override
  public boolean contains(CharSequence name, CharSequence value, boolean ignoreCase) {
    Objects.requireNonNull(name, "name");
    if (knownAbsent(name)) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      if (sameName(name, kv[2 * i])) {
        CharSequence v = kv[2 * i + 1];
        if (ignoreCase
            ? AsciiString.contentEqualsIgnoreCase(value, v)
            : AsciiString.contentEquals(value, v)) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public boolean containsValue(CharSequence name, CharSequence value, boolean ignoreCase) {
    Objects.requireNonNull(name, "name");
    if (knownAbsent(name)) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      if (sameName(name, kv[2 * i]) && hasToken(kv[2 * i + 1], value, ignoreCase)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether one comma-separated, trimmed part of {@code stored} is {@code expected}; like Netty's,
   * an empty part after a trailing comma is not one.
   */
  private static boolean hasToken(CharSequence stored, CharSequence expected, boolean ignoreCase) {
    int start = 0;
    int comma;
    while ((comma = AsciiString.indexOf(stored, ',', start)) != -1) {
      if (equal(AsciiString.trim(stored.subSequence(start, comma)), expected, ignoreCase)) {
        return true;
      }
      start = comma + 1;
    }
    if (start == 0) {
      return equal(AsciiString.trim(stored), expected, ignoreCase);
    }
    return start < stored.length()
        && equal(AsciiString.trim(stored.subSequence(start, stored.length())), expected, ignoreCase);
  }

  private static boolean equal(CharSequence a, CharSequence b, boolean ignoreCase) {
    return ignoreCase ? AsciiString.contentEqualsIgnoreCase(a, b) : AsciiString.contentEquals(a, b);
  }

  @Override
  public boolean isEmpty() {
    return size == 0;
  }

  @Override
  public int size() {
    return size;
  }

  /** Like Netty's: a live view, one name per spelling object added ({@code equals} of the names). */
  @Override
  public Set<String> names() {
    return new Names();
  }

  private Set<CharSequence> distinctNames() {
    if (size == 0) {
      return Collections.emptySet();
    }
    Set<CharSequence> names = new LinkedHashSet<>(size);
    for (int i = 0; i < size; i++) {
      names.add(kv[2 * i]);
    }
    return names;
  }

  // Iteration.

  @Override
  public Iterator<Map.Entry<String, String>> iterator() {
    return HeadersUtils.iteratorAsString(this::iteratorCharSequence);
  }

  @Override
  public Iterator<Map.Entry<CharSequence, CharSequence>> iteratorCharSequence() {
    return new Entries();
  }

  @Override
  public Iterator<String> valueStringIterator(CharSequence name) {
    Values values = new Values(name);
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return values.hasNext();
      }

      @Override
      public String next() {
        return values.next().toString();
      }

      @Override
      public void remove() {
        values.remove();
      }
    };
  }

  @Override
  public Iterator<CharSequence> valueCharSequenceIterator(CharSequence name) {
    return new Values(name);
  }

  // Changes.

  @Override
  public HttpHeaders add(String name, Object value) {
    return add((CharSequence) name, value);
  }

  @Override
  public HttpHeaders add(CharSequence name, Object value) {
    addValue(name, convert(value));
    return this;
  }

  @Override
  public HttpHeaders add(String name, Iterable<?> values) {
    return add((CharSequence) name, values);
  }

  @Override
  public HttpHeaders add(CharSequence name, Iterable<?> values) {
    for (Object v : values) {
      addValue(name, convert(v));
    }
    return this;
  }

  @Override
  public HttpHeaders add(HttpHeaders headers) {
    Objects.requireNonNull(headers, "headers");
    if (headers == this) {
      throw new IllegalArgumentException("can't add to itself.");
    }
    if (headers instanceof DefaultHttpHeaders) {
      // Netty keeps the other's name and value objects here, and so does this.
      for (Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
          it.hasNext(); ) {
        Map.Entry<CharSequence, CharSequence> e = it.next();
        addValue(e.getKey(), e.getValue());
      }
    } else {
      for (Iterator<Map.Entry<String, String>> it = headers.iteratorAsString(); it.hasNext(); ) {
        Map.Entry<String, String> e = it.next();
        add(e.getKey(), e.getValue());
      }
    }
    return this;
  }

  @Override
  public HttpHeaders addInt(CharSequence name, int value) {
    addValue(name, CONVERTER.convertInt(value));
    return this;
  }

  @Override
  public HttpHeaders addShort(CharSequence name, short value) {
    addValue(name, CONVERTER.convertShort(value));
    return this;
  }

  @Override
  public HttpHeaders set(String name, Object value) {
    return set((CharSequence) name, value);
  }

  @Override
  public HttpHeaders set(CharSequence name, Object value) {
    setValue(name, Objects.requireNonNull(convert(value), "convertedValue"));
    return this;
  }

  @Override
  public HttpHeaders set(String name, Iterable<?> values) {
    return set((CharSequence) name, values);
  }

  @Override
  public HttpHeaders set(CharSequence name, Iterable<?> values) {
    setValues(name, values);
    return this;
  }

  @Override
  public HttpHeaders set(HttpHeaders headers) {
    Objects.requireNonNull(headers, "headers");
    if (headers != this) {
      clear();
      add(headers);
    }
    return this;
  }

  @Override
  public HttpHeaders setAll(HttpHeaders headers) {
    Objects.requireNonNull(headers, "headers");
    // Setting every header of these headers again would leave them as they are (Netty's own
    // headers loop forever on it).
    return headers == this ? this : super.setAll(headers);
  }

  @Override
  public HttpHeaders setInt(CharSequence name, int value) {
    setValue(name, CONVERTER.convertInt(value));
    return this;
  }

  @Override
  public HttpHeaders setShort(CharSequence name, short value) {
    setValue(name, CONVERTER.convertShort(value));
    return this;
  }

  @Override
  public HttpHeaders remove(String name) {
    return remove((CharSequence) name);
  }

  @Override
  public HttpHeaders remove(CharSequence name) {
    Objects.requireNonNull(name, "name");
    if (knownAbsent(name)) {
      return this; // a relay's Connection removal after the strip took it: no scan
    }
    removing(name);
    removeAll(name);
    return this;
  }

  @Override
  public HttpHeaders clear() {
    Arrays.fill(kv, 0, 2 * size, null);
    size = 0;
    moves++;
    wireForm = 0;
    facts = KNOWN;
    contentLength = -1;
    latin1 = 0;
    return this;
  }

  /** A copy of these headers and their facts, of this class; it checks values added to it. */
  @Override
  public HttpHeaders copy() {
    return new ParsedHeaders(this);
  }

  // Equality as Netty's headers define it among themselves: names case-blind, values exact.

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ParsedHeaders other) || other.size != size) {
      return false;
    }
    if (other == this) {
      return true;
    }
    for (CharSequence name : distinctNames()) {
      List<CharSequence> mine = stored(name);
      List<CharSequence> theirs = other.stored(name);
      if (mine.size() != theirs.size()) {
        return false;
      }
      for (int i = 0; i < mine.size(); i++) {
        if (!AsciiString.contentEquals(theirs.get(i), mine.get(i))) {
          return false;
        }
      }
    }
    return true;
  }

  /** The hash Netty's headers give the same headers. */
  @Override
  public int hashCode() {
    int result = 0xc2b2ae35;
    for (CharSequence name : distinctNames()) {
      result = 31 * result + AsciiString.CASE_INSENSITIVE_HASHER.hashCode(name);
      for (CharSequence value : stored(name)) {
        result = 31 * result + AsciiString.CASE_SENSITIVE_HASHER.hashCode(value);
      }
    }
    return result;
  }

  /** Entries in insertion order; {@code remove} is not supported, as with Netty's. */
  private final class Entries implements Iterator<Map.Entry<CharSequence, CharSequence>> {
    private int next;

    @Override
    public boolean hasNext() {
      return next < size;
    }

    @Override
    public Map.Entry<CharSequence, CharSequence> next() {
      if (next >= size) {
        throw new NoSuchElementException();
      }
      return new Header(next++);
    }

    @Override
    public void remove() {
      throw new UnsupportedOperationException("read only");
    }
  }

  /**
   * One header handed out by iteration. Like Netty's entries it writes through until the header
   * is removed (here: until any header is removed, after which its index may be another's), and
   * like them {@code setValue} only refuses null.
   */
  private final class Header implements Map.Entry<CharSequence, CharSequence> {
    private final int index;
    private final int movesThen;
    private final CharSequence key;
    private CharSequence value;

    Header(int index) {
      this.index = index;
      this.movesThen = moves;
      this.key = kv[2 * index];
      this.value = kv[2 * index + 1];
    }

    private boolean current() {
      return moves == movesThen;
    }

    @Override
    public CharSequence getKey() {
      return key;
    }

    @Override
    public CharSequence getValue() {
      return current() ? kv[2 * index + 1] : value;
    }

    @Override
    public CharSequence setValue(CharSequence v) {
      Objects.requireNonNull(v, "value");
      CharSequence old = getValue();
      if (current()) {
        changing(key);
        kv[2 * index + 1] = v;
        wireForm = 0;
        if (index < 64) {
          latin1 &= ~(1L << index);
        }
      }
      value = v;
      return old;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Map.Entry<?, ?> e
          && Objects.equals(key, e.getKey())
          && Objects.equals(getValue(), e.getValue());
    }

    @Override
    public int hashCode() {
      return Objects.hashCode(key) ^ Objects.hashCode(getValue());
    }

    @Override
    public String toString() {
      return key + "=" + getValue();
    }
  }

  /** The values of one name, newest first as Netty's value iterators go; removable. */
  private final class Values implements Iterator<CharSequence> {
    private final CharSequence name;
    private int next;
    private int last = -1;

    Values(CharSequence name) {
      this.name = Objects.requireNonNull(name, "name");
      next = before(size);
    }

    private int before(int i) {
      for (int j = i - 1; j >= 0; j--) {
        if (sameName(name, kv[2 * j])) {
          return j;
        }
      }
      return -1;
    }

    @Override
    public boolean hasNext() {
      return next >= 0;
    }

    @Override
    public CharSequence next() {
      if (next < 0) {
        throw new NoSuchElementException();
      }
      last = next;
      next = before(next);
      return kv[2 * last + 1];
    }

    @Override
    public void remove() {
      if (last < 0) {
        throw new IllegalStateException();
      }
      changing(name); // one value of several may go: not worth keeping the facts exact
      removeAt(last); // the values still to come sit before it and keep their indexes
      last = -1;
    }
  }

  /** Netty's view of the names: live, its size the number of distinct name objects. */
  private final class Names extends AbstractCollection<String> implements Set<String> {
    @Override
    public int size() {
      return distinctNames().size();
    }

    @Override
    public boolean isEmpty() {
      return ParsedHeaders.this.isEmpty();
    }

    @Override
    public boolean contains(Object o) {
      return ParsedHeaders.this.contains(o.toString());
    }

    @Override
    public Iterator<String> iterator() {
      Iterator<CharSequence> names = distinctNames().iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return names.hasNext();
        }

        @Override
        public String next() {
          return names.next().toString();
        }
      };
    }
  }
}
