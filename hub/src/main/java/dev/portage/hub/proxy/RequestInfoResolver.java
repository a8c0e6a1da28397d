package dev.portage.hub.proxy;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Resolves a {@link RequestInfo} from a request line and User-Agent, with the rules of the
 * apiserver's {@code RequestInfoFactory}: {@code /api/v1/...} and {@code /apis/g/v/...} paths,
 * namespaced and cluster-scoped resources, subresources, the legacy {@code /watch/} prefix,
 * {@code ?watch=true} on collections, {@code fieldSelector=metadata.name=x} naming the object of a
 * list or watch. Stateless and thread-safe.
 */
public final class RequestInfoResolver {

  /** Subresources of a namespace itself: {@code /namespaces/x/status} is not a resource "status". */
  private static final Set<String> NAMESPACE_SUBRESOURCES = Set.of("status", "finalize");

  private RequestInfoResolver() {}

  /**
   * Resolves one request.
   *
   * @param method the HTTP method
   * @param uri the request target: path and optional query, percent-encoded
   * @param userAgent the {@code User-Agent} header, or null
   */
  public static RequestInfo resolve(String method, String uri, String userAgent) {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(uri, "uri");
    Map<String, List<String>> params = Map.of(); // RequestInfo keeps it as is (no copy)
    String rawPath = uri;
    if (uri.indexOf('?') >= 0 || uri.indexOf('#') >= 0) {
      // A kubelet's get has neither: its path needs no decoder object at all.
      QueryStringDecoder decoder = new QueryStringDecoder(uri);
      rawPath = decoder.rawPath();
      if (!decoder.parameters().isEmpty()) {
        params = decoder.parameters();
      }
    }
    String component = component(userAgent);
    List<String> parts = new ArrayList<>(8);
    String path = segments(rawPath, parts);
    String lowerMethod = lowerMethod(method);

    boolean core = parts.size() >= 2 && parts.get(0).equals("api");
    boolean grouped = parts.size() >= 3 && parts.get(0).equals("apis");
    if (!core && !grouped) {
      return nonResource(lowerMethod, path, component, params);
    }
    String group = core ? "" : parts.get(1);
    String version = core ? parts.get(1) : parts.get(2);
    List<String> rest = parts.subList(core ? 2 : 3, parts.size());
    if (rest.isEmpty()) {
      // /api/v1 and /apis/g/v are discovery documents, not resources.
      return nonResource(lowerMethod, path, component, params);
    }

    String verb =
        switch (lowerMethod) {
          case "post" -> "create";
          case "get", "head" -> "get";
          case "put" -> "update";
          case "patch" -> "patch";
          case "delete" -> "delete";
          default -> "";
        };
    if (rest.get(0).equals("watch") || rest.get(0).equals("proxy")) {
      if (rest.size() < 2) {
        return nonResource(lowerMethod, path, component, params);
      }
      verb = rest.get(0);
      rest = rest.subList(1, rest.size());
    }

    String namespace = "";
    if (rest.get(0).equals("namespaces")) {
      if (rest.size() > 1) {
        namespace = rest.get(1);
        if (rest.size() > 2 && !NAMESPACE_SUBRESOURCES.contains(rest.get(2))) {
          rest = rest.subList(2, rest.size());
        }
      }
    }
    String resource = rest.get(0);
    String name = rest.size() >= 2 ? rest.get(1) : "";
    String subresource = rest.size() >= 3 ? rest.get(2) : "";

    if (name.isEmpty() && verb.equals("get")) {
      verb = isTrue(first(params, "watch")) ? "watch" : "list";
      String byName = exactName(first(params, "fieldSelector"));
      if (byName != null) {
        name = byName;
      }
    }
    if (name.isEmpty() && verb.equals("delete")) {
      verb = "deletecollection";
    }
    return new RequestInfo(
        verb, true, path, group, version, namespace, resource, subresource, name, component, params);
  }

  /** The User-Agent up to the first "/": {@code kubelet/v1.30.0 (linux/amd64)} → {@code kubelet}. */
  static String component(String userAgent) {
    if (userAgent == null) {
      return "";
    }
    int slash = userAgent.indexOf('/');
    int end = slash < 0 ? userAgent.length() : slash;
    int from = 0;
    while (from < end && userAgent.charAt(from) <= ' ') {
      from++;
    }
    int to = end;
    while (to > from && userAgent.charAt(to - 1) <= ' ') {
      to--;
    }
    String common = CommonSegments.lookup(userAgent, from, to);
    return common != null ? common : userAgent.substring(from, to);
  }

  private static RequestInfo nonResource(
      String verb, String path, String component, Map<String, List<String>> params) {
    return new RequestInfo(verb, false, path, "", "", "", "", "", "", component, params);
  }

  /**
   * Fills {@code parts} with the path's non-empty segments, each percent-decoded on its own so an
   * encoded "/" stays inside its segment, and returns the canonical path ("/" and the segments
   * joined by "/"). Scans by hand, without split or join: this runs once per request, and a path
   * that is already canonical (the usual case) is returned as it came, with no copy.
   */
  private static String segments(String rawPath, List<String> parts) {
    int length = rawPath.length();
    boolean canonical = length > 0 && rawPath.charAt(0) == '/';
    int start = 0;
    while (start <= length) {
      int end = rawPath.indexOf('/', start);
      if (end < 0) {
        end = length;
      }
      if (end > start) {
        String common = plain(rawPath, start, end) ? CommonSegments.lookup(rawPath, start, end)
            : null;
        if (common != null) {
          parts.add(common); // needs no decoding: already canonical
        } else {
          String raw = rawPath.substring(start, end);
          String decoded = QueryStringDecoder.decodeComponent(raw);
          canonical &= decoded.equals(raw);
          parts.add(decoded);
        }
      } else if (start > 0) {
        canonical = false; // "//" or a trailing "/"
      }
      start = end + 1;
    }
    if (canonical && !parts.isEmpty()) {
      return rawPath;
    }
    StringBuilder path = new StringBuilder(length + 1);
    for (String part : parts) {
      path.append('/').append(part);
    }
    return path.isEmpty() ? "/" : path.toString();
  }

  /** Whether {@code s[from, to)} decodes to itself (no percent escape, no "+"). */
  private static boolean plain(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c == '%' || c == '+') {
        return false;
      }
    }
    return true;
  }

  /** The method in lower case; the common ones without a copy. */
  private static String lowerMethod(String method) {
    return switch (method) {
      case "GET" -> "get";
      case "POST" -> "post";
      case "PUT" -> "put";
      case "PATCH" -> "patch";
      case "DELETE" -> "delete";
      case "HEAD" -> "head";
      default -> method.toLowerCase(Locale.ROOT);
    };
  }

  private static String first(Map<String, List<String>> params, String key) {
    List<String> values = params.get(key);
    return values == null || values.isEmpty() ? "" : values.get(0);
  }

  /** Go's strconv.ParseBool, true side. */
  private static boolean isTrue(String value) {
    return switch (value) {
      case "1", "t", "T", "true", "TRUE", "True" -> true;
      default -> false;
    };
  }

  /** The apiserver's IsValidPathSegmentName: usable as one path segment. */
  private static boolean validPathSegment(String name) {
    return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0
        && name.indexOf('%') < 0;
  }

  /** The value of a {@code metadata.name=x} (or {@code ==}) term, when it is the only name term. */
  private static String exactName(String fieldSelector) {
    if (fieldSelector.isEmpty()) {
      return null;
    }
    String found = null;
    for (String term : fieldSelector.split(",")) {
      String t = term.trim();
      String value = null;
      if (t.startsWith("metadata.name==")) {
        value = t.substring("metadata.name==".length());
      } else if (t.startsWith("metadata.name=")) {
        value = t.substring("metadata.name=".length());
      }
      if (value != null) {
        if (found != null || !validPathSegment(value)) {
          return null;
        }
        found = value;
      }
    }
    return found;
  }
}
