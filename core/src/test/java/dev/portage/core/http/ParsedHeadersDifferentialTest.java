package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Calendar;
import java.util.Date;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TimeZone;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link ParsedHeaders} against Netty's headers from the factory {@link PlainHead} used before
 * (names unchecked, values checked): the same random sequences of operations, from fixed seeds,
 * applied to both, and every observable answer compared after every step (iteration in all its
 * forms, lookups, conversions, value iterators, names, hash, text, and the exceptions thrown, with
 * the state they leave). Wherever the parsed headers say their framing facts are known, the facts
 * are checked against the headers themselves.
 */
class ParsedHeadersDifferentialTest {

  private static final DefaultHttpHeadersFactory NETTY =
      DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);

  private static final List<String> HEADS = List.of(
      "GET /a HTTP/1.1\r\nHost: a\r\nconnection: keep-alive, X-Private\r\nX-Private: 1\r\n"
          + "TE: trailers\r\nAccept: */*\r\nx-private: 2\r\n\r\n",
      "GET / HTTP/1.0\r\nConnection: close\r\nCONNECTION: keep-alive\r\nKeep-Alive: timeout=5\r\n"
          + "Proxy-Connection: keep-alive\r\nProxy-Authorization: basic x\r\nx-http2-scheme: http\r\n\r\n",
      "POST /p HTTP/1.1\r\nhost: b\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Num: 70000\r\n\r\n",
      "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 12\r\nconnection: Keep-Alive\r\n"
          + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Num: 42\r\nX-Num: 7\r\n\r\n",
      "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nProxy-Authenticate: x\r\nVary: a, b\r\n\r\n",
      "HTTP/1.0 200 OK\r\nServer: x\r\n\r\n");

  /** Tracked names in several spellings, untracked ones, repeated ones, an empty one. */
  private static final String[] NAMES = {
    "Content-Length", "content-length", "CONTENT-length", "Connection", "connection", "CONNECTION",
    "Keep-Alive", "keep-alive", "TE", "te", "Transfer-Encoding", "Upgrade", "Proxy-Connection",
    "Proxy-Authorization", "proxy-authenticate", "x-http2-scheme", "X-Http2-Stream-Id", "Host",
    "host", "X-Private", "x-private", "X-Num", "Date", "Set-Cookie", "Vary", "Absent", "",
  };

  /** Netty's constants for the names the facts answer by identity. */
  private static final List<AsciiString> FRAMING_CONSTANTS = List.of(
      HttpHeaderNames.CONNECTION, HttpHeaderNames.CONTENT_LENGTH, HttpHeaderNames.TRANSFER_ENCODING);

  private static final String[] VALUES = {
    "close", "keep-alive", "Keep-Alive, CLOSE", "x-private , keep-alive", "12", "0", "-3", "70000",
    "32767", " 5 ", "abc", "", "a,b,,c", ",", "a,", "trailers", "chunked", "CHUNKED",
    "Sun, 06 Nov 1994 08:49:37 GMT", "1.5", "tab\tinside", "caf\u00e9", "x\r\ny: injected",
    "nul\u0000", "\u0100wide",
  };

  private static final java.util.regex.Pattern INVALID =
      java.util.regex.Pattern.compile("[\r\u0000\u00e9\u0100]");

  @Test
  void everyAnswerIsNettysAfterEveryStep() {
    for (int seed = 1; seed <= 32; seed++) {
      run(seed, 70);
    }
  }

  @Test
  void copiesAreParsedHeadersWithTheFactsThatKeepCheckingValues() {
    ParsedHeaders parsed = parse(HEADS.get(3));

    HttpHeaders copy = parsed.copy();

    assertThat(copy).isInstanceOf(ParsedHeaders.class).isEqualTo(parsed);
    assertThat(copy.hashCode()).isEqualTo(parsed.hashCode());
    assertThat(((ParsedHeaders) copy).known()).isTrue();
    assertThat(((ParsedHeaders) copy).contentLength()).isEqualTo(12);
    assertThat(copy.entries().toString()).isEqualTo(parsed.entries().toString());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> copy.add("X-Bad", "a\r\nb: c"))
        .isInstanceOf(IllegalArgumentException.class);
    copy.set("Transfer-Encoding", "chunked").remove("Content-Length");
    assertThat(((ParsedHeaders) copy).known()).isFalse();
    assertThat(parsed.known()).isTrue();
    assertThat(parsed.get("transfer-encoding")).isNull();
    assertThat(parsed.getInt("content-length")).isEqualTo(12);
    assertThat(copy).isNotEqualTo(parsed);
    assertThat(parsed).isNotEqualTo(NETTY.newHeaders().add(parsed)); // only among themselves
  }

  @Test
  void iteratingAndChangingOtherNamesKeepsTheFactsKnown() {
    ParsedHeaders parsed = parse(HEADS.get(3));

    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = parsed.iteratorCharSequence();
        it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      if (AsciiString.contentEqualsIgnoreCase(e.getKey(), "server")) {
        e.setValue("other");
      }
    }
    parsed.names();
    parsed.entries();
    for (Iterator<CharSequence> it = parsed.valueCharSequenceIterator("X-Num"); it.hasNext(); ) {
      it.next();
      it.remove();
    }

    assertThat(parsed.known()).isTrue();
    assertThat(parsed.get("Server")).isEqualTo("other");
    assertThat(parsed.contains("x-num")).isFalse();
    checkFacts(parsed, List.of());
  }

  private static void run(long seed, int steps) {
    Random r = new Random(seed);
    String head = HEADS.get((int) (seed % HEADS.size()));
    ParsedHeaders ours = parse(head);
    HttpHeaders netty = NETTY.newHeaders();
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = ours.iteratorCharSequence();
        it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      netty.add(e.getKey(), e.getValue());
    }
    List<String> log = new ArrayList<>();
    log.add("seed " + seed + " head " + head.replace("\r\n", "|"));
    compare(ours, netty, log);
    for (int step = 0; step < steps; step++) {
      Op op = op(r);
      log.add(step + ": " + op.text);
      Object a = answer(() -> op.apply(ours));
      Object b = answer(() -> op.apply(netty));
      same(a, b, log);
      compare(ours, netty, log);
    }
  }

  private static ParsedHeaders parse(String head) {
    ByteBuf in = Unpooled.copiedBuffer(head, StandardCharsets.ISO_8859_1);
    try {
      PlainHead parser = new PlainHead();
      HttpMessage m = head.startsWith("HTTP/") ? parser.parseResponse(in) : parser.parseRequest(in);
      assertThat(m).as(head).isNotNull();
      return (ParsedHeaders) m.headers();
    } finally {
      in.release();
    }
  }

  /** One operation, applied the same way to either headers; its answer compared. */
  private record Op(String text, java.util.function.Function<HttpHeaders, Object> fn) {
    Object apply(HttpHeaders h) {
      return fn.apply(h);
    }
  }

  private static Op op(Random r) {
    CharSequence name = name(r);
    int k = r.nextInt(3);
    switch (r.nextInt(22)) {
      case 0, 1, 2: {
        Object v = object(r);
        return new Op("add " + show(name) + " " + show(v), h -> h.add(name, v).size());
      }
      case 3: {
        Object v = object(r);
        String n = name == null ? null : name.toString();
        return new Op("add(String) " + show(n) + " " + show(v), h -> h.add(n, v).size());
      }
      case 4: {
        List<Object> vs = iterable(r);
        return new Op("add iterable " + show(name) + " " + vs, h -> h.add(name, vs).size());
      }
      case 5: {
        int v = r.nextInt(200) - 50;
        return r.nextBoolean()
            ? new Op("addInt " + show(name) + " " + v, h -> h.addInt(name, v).size())
            : new Op("addShort " + show(name) + " " + v, h -> h.addShort(name, (short) v).size());
      }
      case 6, 7: {
        Object v = object(r);
        return new Op("set " + show(name) + " " + show(v), h -> h.set(name, v).size());
      }
      case 8: {
        List<Object> vs = r.nextInt(8) == 0 ? null : iterable(r);
        return new Op("set iterable " + show(name) + " " + vs, h -> h.set(name, vs).size());
      }
      case 9: {
        int v = r.nextInt(100000) - 10;
        return r.nextBoolean()
            ? new Op("setInt " + show(name) + " " + v, h -> h.setInt(name, v).size())
            : new Op("setShort " + show(name) + " " + v, h -> h.setShort(name, (short) v).size());
      }
      case 10, 11: {
        String n = name == null ? null : name.toString();
        return r.nextBoolean()
            ? new Op("remove " + show(name), h -> h.remove(name).size())
            : new Op("remove(String) " + show(n), h -> h.remove(n).size());
      }
      case 12:
        return r.nextInt(4) == 0 ? new Op("clear", h -> h.clear().size()) : op(r);
      case 13: {
        HttpHeaders other = other(r);
        String text = other == null ? "self" : other.getClass().getSimpleName() + " " + other;
        switch (k) {
          case 0:
            return new Op("add headers " + text, h -> h.add(other == null ? h : other).size());
          case 1:
            return new Op("set headers " + text, h -> h.set(other == null ? h : other).size());
          default:
            return other == null
                ? op(r) // Netty's own headers loop forever on setAll(themselves)
                : new Op("setAll headers " + text, h -> h.setAll(other).size());
        }
      }
      case 14: {
        int at = r.nextInt(8);
        CharSequence v = r.nextInt(6) == 0 ? null : value(r);
        return new Op("entry " + at + " setValue " + show(v), h -> {
          Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence();
          for (int i = 0; it.hasNext(); i++) {
            Map.Entry<CharSequence, CharSequence> e = it.next();
            if (i == at) {
              return String.valueOf(e.setValue(v)) + " now " + e.getValue();
            }
          }
          return "none";
        });
      }
      case 15: {
        int at = r.nextInt(8);
        String v = r.nextInt(6) == 0 ? null : value(r).toString();
        return new Op("string entry " + at + " setValue " + show(v), h -> {
          Iterator<Map.Entry<String, String>> it = k == 0 ? h.iteratorAsString() : h.iterator();
          for (int i = 0; it.hasNext(); i++) {
            Map.Entry<String, String> e = it.next();
            if (i == at) {
              return e.setValue(v) + " now " + e.getValue() + " " + e;
            }
          }
          return "none";
        });
      }
      case 16: {
        int at = r.nextInt(8);
        String v = value(r).toString();
        return new Op("entries() " + at + " setValue " + show(v), h -> {
          List<Map.Entry<String, String>> all = h.entries();
          if (at < all.size()) {
            return all.get(at).setValue(v) + " " + all.get(at);
          }
          return all.size();
        });
      }
      case 17, 18: {
        int at = r.nextInt(3);
        boolean strings = r.nextBoolean();
        return new Op("values " + show(name) + " remove " + at + (strings ? " strings" : ""), h -> {
          Iterator<? extends CharSequence> it =
              strings ? h.valueStringIterator(name) : h.valueCharSequenceIterator(name);
          List<String> seen = new ArrayList<>();
          if (at == 2) {
            it.remove(); // before any next(): refused
          }
          for (int i = 0; it.hasNext(); i++) {
            seen.add(it.next().toString());
            // Only the first value: removing a later one, Netty's iterator also unlinks the
            // headers of other names between the two from its hash chain (lost to get, still
            // iterated); these headers do not copy that.
            if (i == 0 && at == 0) {
              it.remove();
              if (k == 1) {
                it.remove(); // twice: refused
              }
            }
          }
          return seen;
        });
      }
      case 19:
        return new Op("iterator remove", h -> {
          Iterator<?> it = k == 0 ? h.iteratorCharSequence() : h.iterator();
          if (it.hasNext()) {
            it.next();
          }
          it.remove();
          return "removed";
        });
      case 20: {
        // Netty's copies stop checking values, these keep checking (copiesKeepCheckingValues):
        // valid values only here.
        CharSequence n = name(r) == null ? "Connection" : NAMES[r.nextInt(NAMES.length)];
        Op change = switch (k) {
          case 0 -> new Op("remove " + n, h -> h.remove(n).size());
          case 1 -> new Op("set " + n + " close", h -> h.set(n, "close").size());
          default -> new Op("add " + n + " 7", h -> h.add(n, "7").size());
        };
        Op then = change;
        return new Op("copy, then on the copy: " + then.text, h -> {
          HttpHeaders copy = h.copy();
          List<Object> seen = new ArrayList<>();
          seen.add(copy.equals(h.copy()));
          seen.add(copy.hashCode() == h.hashCode());
          seen.add(observe(copy));
          seen.add(answer(() -> then.apply(copy)));
          seen.add(observe(copy));
          return seen;
        });
      }
      default: {
        return new Op("next past the end", h -> {
          Iterator<?> i = k == 0 ? h.iteratorCharSequence() : h.iterator();
          while (i.hasNext()) {
            i.next();
          }
          return i.next();
        });
      }
    }
  }

  /** Some headers to add, set or set all from: Netty's, parsed ones, or (null) the headers themselves. */
  private static HttpHeaders other(Random r) {
    switch (r.nextInt(4)) {
      case 0:
        return null;
      case 1:
        return parse(HEADS.get(r.nextInt(HEADS.size())));
      case 2:
        return new DefaultHttpHeaders().add("X-Private", "3").add("connection", "close")
            .add("x-private", "4");
      default: {
        HttpHeaders h = NETTY.newHeaders();
        for (int i = r.nextInt(4); i > 0; i--) {
          CharSequence v = value(r);
          CharSequence n = name(r);
          try {
            h.add(n, v);
          } catch (RuntimeException refused) {
            // a null name or a value Netty's check refuses: not added
          }
        }
        return h;
      }
    }
  }

  private static CharSequence name(Random r) {
    int p = r.nextInt(40);
    if (p == 0) {
      return null;
    }
    String s = NAMES[r.nextInt(NAMES.length)];
    if (p < 8) {
      return new AsciiString(s);
    }
    if (p == 8) {
      return new StringBuilder(s);
    }
    if (p == 9) {
      return FRAMING_CONSTANTS.get(r.nextInt(FRAMING_CONSTANTS.size()));
    }
    return s;
  }

  private static CharSequence value(Random r) {
    String s = VALUES[r.nextInt(VALUES.length)];
    int p = r.nextInt(10);
    return p == 0 ? new AsciiString(s) : p == 1 ? new StringBuilder(s) : s;
  }

  private static Object object(Random r) {
    switch (r.nextInt(14)) {
      case 0:
        return null;
      case 1:
        return r.nextInt(100000) - 5;
      case 2:
        return new Date(784111777000L);
      case 3: {
        Calendar c = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
        c.setTimeInMillis(1_700_000_000_000L);
        return c;
      }
      case 4:
        return List.of("a", "b");
      case 5:
        return Boolean.TRUE;
      default:
        return value(r);
    }
  }

  private static List<Object> iterable(Random r) {
    List<Object> vs = new ArrayList<>();
    for (int i = r.nextInt(4); i > 0; i--) {
      vs.add(r.nextInt(12) == 0 ? null : object(r));
    }
    return vs;
  }

  private static String show(Object o) {
    return o == null ? "null" : o.getClass().getSimpleName() + "'" + o + "'";
  }

  /** What a call answers: its result, or the class of what it threw. */
  private static Object answer(Supplier<Object> call) {
    try {
      Object o = call.get();
      return o instanceof CharSequence s ? s.toString() : o;
    } catch (Throwable t) {
      // Netty's getTimeMillis lets a checked ParseException out unchecked, hence Throwable.
      return "threw " + t.getClass().getName();
    }
  }

  private static void compare(ParsedHeaders ours, HttpHeaders netty, List<String> log) {
    same(observe(ours), observe(netty), log);
    if (ours.known()) {
      checkFacts(ours, log);
    }
    checkLatin1(ours, log);
  }

  /** Only a value the parse made (a String of chars below 256) is marked to be copied as bytes. */
  private static void checkLatin1(ParsedHeaders h, List<String> log) {
    String why = String.join("\n", log);
    for (int i = 0; i < 70; i++) {
      if (h.latin1At(i)) {
        assertThat(i).as(why).isLessThan(h.size());
        assertThat(h.valueAt(i)).as(why).isInstanceOf(String.class);
        assertThat(h.valueAt(i).chars().allMatch(c -> c < 256)).as(why).isTrue();
      }
    }
  }

  /** Equal answers; on a difference, the first differing element and the steps that led to it. */
  private static void same(Object ours, Object netty, List<String> log) {
    assertThat(firstDifference(ours, netty)).as(String.join("\n", log)).isNull();
  }

  private static String firstDifference(Object a, Object b) {
    if (a instanceof List<?> x && b instanceof List<?> y) {
      for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
        String d = firstDifference(x.get(i), y.get(i));
        if (d != null) {
          return "[" + i + "] " + d;
        }
      }
      return x.size() == y.size() ? null : "sizes " + x.size() + " vs Netty's " + y.size();
    }
    return java.util.Objects.equals(a, b) ? null : a + " vs Netty's " + b;
  }

  private static void checkFacts(ParsedHeaders h, List<String> log) {
    String why = String.join("\n", log);
    int hopByHop = 0;
    int tokens = 0;
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      hopByHop |= HopByHopHeaders.bitOf(e.getKey());
      if (AsciiString.contentEqualsIgnoreCase(e.getKey(), HttpHeaderNames.CONNECTION)) {
        tokens |= ParsedHeaders.tokens(e.getValue());
      }
    }
    assertThat(h.hopByHop()).as(why).isEqualTo(hopByHop);
    assertThat(h.connectionTokens()).as(why).isEqualTo(tokens);
    List<String> lengths = h.getAll(HttpHeaderNames.CONTENT_LENGTH);
    if (lengths.isEmpty()) {
      assertThat(h.contentLength()).as(why).isEqualTo(-1);
    } else {
      assertThat(lengths).as(why).hasSize(1);
      assertThat(h.contentLength()).as(why).isEqualTo(Long.parseLong(lengths.get(0)));
    }
  }

  /** Everything one can ask the headers without changing them. */
  private static List<Object> observe(HttpHeaders h) {
    List<Object> seen = new ArrayList<>();
    seen.add(h.size());
    seen.add(h.isEmpty());
    List<String> entries = new ArrayList<>();
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
      Map.Entry<CharSequence, CharSequence> e = it.next();
      entries.add(e.getKey().getClass().getSimpleName() + " " + e.getKey() + ": "
          + e.getValue().getClass().getSimpleName() + " " + e.getValue() + " / " + e);
    }
    seen.add(entries);
    List<String> strings = new ArrayList<>();
    for (Map.Entry<String, String> e : h) {
      strings.add(e.getKey() + ": " + e.getValue() + " / " + e);
    }
    seen.add(strings);
    seen.add(h.entries().stream().map(e -> e.getKey() + ": " + e.getValue()).toList());
    seen.add(new ArrayList<>(h.names()));
    seen.add(h.names().size());
    seen.add(h.names().isEmpty());
    seen.add(h.names().toString());
    seen.add(h.hashCode());
    seen.add(h.toString().replaceFirst("^\\w+", ""));
    for (String n : NAMES) {
      for (CharSequence name : List.of(n, new AsciiString(n.toUpperCase()))) {
        seen.add(answer(() -> h.get(name)));
        seen.add(answer(() -> h.get(name, "default")));
        seen.add(answer(() -> h.getAll(name)));
        seen.add(answer(() -> h.getAllAsString(name)));
        seen.add(answer(() -> h.contains(name)));
        seen.add(answer(() -> h.names().contains(name)));
        seen.add(answer(() -> h.getInt(name)));
        seen.add(answer(() -> h.getInt(name, -7)));
        seen.add(answer(() -> h.getShort(name)));
        seen.add(answer(() -> h.getShort(name, (short) -7)));
        seen.add(answer(() -> h.getTimeMillis(name)));
        seen.add(answer(() -> h.getTimeMillis(name, -7L)));
        seen.add(answer(() -> list(h.valueStringIterator(name))));
        seen.add(answer(() -> list(h.valueCharSequenceIterator(name))));
      }
      seen.add(answer(() -> h.get(n)));
      seen.add(answer(() -> h.getAll(n)));
      seen.add(answer(() -> h.contains(n)));
      for (String v : Arrays.asList("close", "KEEP-ALIVE", "x-private", "12", "", "b", "a,b,,c", null)) {
        seen.add(answer(() -> h.contains(n, v, false)));
        seen.add(answer(() -> h.contains(n, v, true)));
        seen.add(answer(() -> h.contains((CharSequence) n, v, true)));
        seen.add(answer(() -> h.containsValue(n, v, false)));
        seen.add(answer(() -> h.containsValue(n, v, true)));
      }
    }
    for (AsciiString name : FRAMING_CONSTANTS) {
      seen.add(answer(() -> h.get(name)));
      seen.add(answer(() -> h.getAll(name)));
      seen.add(answer(() -> h.contains(name)));
      for (String v : Arrays.asList("close", "chunked", "CHUNKED", "12", "")) {
        seen.add(answer(() -> h.contains(name, v, true)));
        seen.add(answer(() -> h.containsValue(name, v, true)));
        seen.add(answer(() -> h.containsValue(name, v, false)));
      }
    }
    seen.add(answer(() -> h.get((String) null)));
    seen.add(answer(() -> h.getAll((CharSequence) null)));
    seen.add(answer(() -> h.contains((CharSequence) null)));
    seen.add(answer(() -> h.getInt(null)));
    seen.add(answer(() -> h.containsValue(null, "x", true)));
    seen.add(answer(() -> h.contains(null, "x", true)));
    seen.add(answer(() -> h.valueCharSequenceIterator(null)));
    seen.add(answer(() -> h.names().contains(null)));
    return seen;
  }

  private static List<String> list(Iterator<? extends CharSequence> it) {
    List<String> all = new ArrayList<>();
    while (it.hasNext()) {
      all.add(it.next().toString());
    }
    return all;
  }
}
