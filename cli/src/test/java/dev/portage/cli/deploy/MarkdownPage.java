package dev.portage.cli.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Markdown page as the docs tests read it: its prose lines (fenced code blocks and inline code spans
 * blanked out, so examples are not taken for links or words), the links and images in that prose, and
 * the anchors its headings get on GitHub.
 */
final class MarkdownPage {
  /** {@code [text](target)} and {@code ![alt](target)}, with an optional {@code "title"}. */
  private static final Pattern INLINE_LINK = Pattern.compile("!?\\[[^\\]]*]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
  /** A reference definition, {@code [name]: target}. */
  private static final Pattern REFERENCE = Pattern.compile("^\\s{0,3}\\[[^\\]]+]:\\s*<?(\\S+?)>?(?:\\s+.*)?$");
  private static final Pattern HEADING = Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

  /** One link of a page: where it points and the line it is on (1-based). */
  record Link(String target, int line) {}

  private final List<String> prose;
  private final Set<String> anchors;

  private MarkdownPage(List<String> prose, Set<String> anchors) {
    this.prose = prose;
    this.anchors = anchors;
  }

  static MarkdownPage read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static MarkdownPage parse(String text) {
    List<String> prose = new ArrayList<>();
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    String fence = null;
    for (String line : text.split("\n", -1)) {
      String trimmed = line.stripLeading();
      if (fence == null && (trimmed.startsWith("```") || trimmed.startsWith("~~~"))) {
        fence = trimmed.substring(0, 3);
        prose.add("");
        continue;
      }
      if (fence != null) {
        if (trimmed.startsWith(fence)) {
          fence = null;
        }
        prose.add("");
        continue;
      }
      Matcher h = HEADING.matcher(line);
      if (h.matches()) {
        String slug = slug(h.group(2));
        int n = seen.merge(slug, 1, Integer::sum);
        anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
      }
      prose.add(withoutCodeSpans(line));
    }
    return new MarkdownPage(prose, anchors);
  }

  /** The page's lines with code blocks and code spans blanked (line numbers stay as in the file). */
  List<String> prose() {
    return prose;
  }

  /** Anchors of the page's headings, as GitHub generates them. */
  Set<String> anchors() {
    return anchors;
  }

  /** Every link target in the prose, inline, image or reference-style. */
  List<Link> links() {
    List<Link> out = new ArrayList<>();
    for (int i = 0; i < prose.size(); i++) {
      Matcher m = INLINE_LINK.matcher(prose.get(i));
      while (m.find()) {
        out.add(new Link(m.group(1), i + 1));
      }
      Matcher r = REFERENCE.matcher(prose.get(i));
      if (r.matches()) {
        out.add(new Link(r.group(1), i + 1));
      }
    }
    return out;
  }

  /** True for a link into the repository (no scheme such as {@code https:} or {@code mailto:}). */
  static boolean isRelative(String target) {
    return !SCHEME.matcher(target).find() && !target.startsWith("//");
  }

  /**
   * What is wrong with a relative link of {@code page} (a file under {@code root}), or null when it
   * resolves: the file or directory must exist inside the repository, and a {@code #anchor} into a
   * Markdown page must be one of its headings.
   */
  static String problem(Path root, Path page, String target) {
    int hash = target.indexOf('#');
    String pathPart = hash < 0 ? target : target.substring(0, hash);
    String anchor = hash < 0 ? null : target.substring(hash + 1);
    int query = pathPart.indexOf('?');
    if (query >= 0) {
      pathPart = pathPart.substring(0, query);
    }
    Path file = pathPart.isEmpty() ? page
        : page.getParent().resolve(URLDecoder.decode(pathPart, StandardCharsets.UTF_8)).normalize();
    if (!file.startsWith(root.normalize())) {
      return "points outside the repository";
    }
    if (!Files.exists(file)) {
      return "no such file: " + root.relativize(file);
    }
    if (anchor != null && !anchor.isEmpty() && file.toString().endsWith(".md")) {
      Set<String> known = read(file).anchors();
      if (!known.contains(anchor.toLowerCase(Locale.ROOT))) {
        return "no heading for #" + anchor + " in " + root.relativize(file);
      }
    }
    return null;
  }

  /** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
  static String slug(String heading) {
    String text = heading.replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
    StringBuilder out = new StringBuilder();
    text.codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        out.appendCodePoint(c);
      } else if (c == ' ') {
        out.append('-');
      }
    });
    return out.toString();
  }

  private static String withoutCodeSpans(String line) {
    StringBuilder out = new StringBuilder(line.length());
    int i = 0;
    while (i < line.length()) {
      if (line.charAt(i) != '`') {
        out.append(line.charAt(i++));
        continue;
      }
      int ticks = 0;
      while (i + ticks < line.length() && line.charAt(i + ticks) == '`') {
        ticks++;
      }
      String delimiter = "`".repeat(ticks);
      int end = line.indexOf(delimiter, i + ticks);
      if (end < 0) {
        out.append(line, i, line.length());
        break;
      }
      out.append(" ".repeat(end + ticks - i));
      i = end + ticks;
    }
    return out.toString();
  }
}
