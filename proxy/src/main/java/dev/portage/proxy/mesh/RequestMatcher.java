package dev.portage.proxy.mesh;

import dev.portage.api.linkerd.destination.RequestMatch;
import dev.portage.api.linkerd.httptypes.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Compiles a ServiceProfile {@code RequestMatch} into a predicate over request heads: path regex
 * (anchored, on the path without the query), method, and {@code all}/{@code any}/{@code not}
 * combinations. An empty match matches nothing. Immutable.
 */
final class RequestMatcher {

  private RequestMatcher() {}

  /** @throws IllegalArgumentException if a regex does not compile */
  static Predicate<HttpRequest> compile(RequestMatch m) {
    return switch (m.getMatchCase()) {
      case ALL -> {
        List<Predicate<HttpRequest>> parts = m.getAll().getMatchesList().stream().map(RequestMatcher::compile).toList();
        yield r -> parts.stream().allMatch(p -> p.test(r));
      }
      case ANY -> {
        List<Predicate<HttpRequest>> parts = m.getAny().getMatchesList().stream().map(RequestMatcher::compile).toList();
        yield r -> parts.stream().anyMatch(p -> p.test(r));
      }
      case NOT -> compile(m.getNot()).negate();
      case PATH -> {
        Pattern p = Pattern.compile(m.getPath().getRegex());
        yield r -> p.matcher(new QueryStringDecoder(r.uri()).rawPath()).matches();
      }
      case METHOD -> {
        String name = methodName(m.getMethod());
        yield r -> r.method().name().equals(name);
      }
      case MATCH_NOT_SET -> r -> false;
    };
  }

  private static String methodName(HttpMethod m) {
    return m.hasRegistered() ? m.getRegistered().name() : m.getUnregistered();
  }
}
