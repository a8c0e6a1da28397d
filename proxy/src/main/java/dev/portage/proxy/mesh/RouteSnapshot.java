package dev.portage.proxy.mesh;

import dev.portage.api.linkerd.destination.ResponseClass;
import dev.portage.api.linkerd.destination.ResponseMatch;
import dev.portage.api.linkerd.destination.Route;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * One compiled ServiceProfile route: its request condition, response classes (first matching
 * class decides; no match falls back to the default rule, as Linkerd's classifier does), whether
 * failures may be retried, and its timeout (zero for none). Immutable.
 */
record RouteSnapshot(
    String name,
    Predicate<HttpRequest> condition,
    List<Classifier> classes,
    boolean retryable,
    Duration timeout) {

  /** Requests no profile route matched: unnamed, 5xx are failures, no retries, no timeout. */
  static final RouteSnapshot DEFAULT =
      new RouteSnapshot("default", r -> true, List.of(), false, Duration.ZERO);

  /** A compiled response class. */
  record Classifier(IntPredicate status, boolean failure) {}

  static RouteSnapshot of(Route r, boolean budgetValid) {
    List<Classifier> classes = new ArrayList<>();
    for (ResponseClass c : r.getResponseClassesList()) {
      classes.add(new Classifier(compile(c.getCondition()), c.getIsFailure()));
    }
    Duration timeout =
        r.hasTimeout()
            ? Duration.ofSeconds(r.getTimeout().getSeconds(), r.getTimeout().getNanos())
            : Duration.ZERO;
    return new RouteSnapshot(
        r.getMetricsLabelsOrDefault("route", "unnamed"),
        RequestMatcher.compile(r.getCondition()),
        List.copyOf(classes),
        r.getIsRetryable() && budgetValid,
        timeout.isNegative() ? Duration.ZERO : timeout);
  }

  /** {@link #isFailure(HttpResponse, boolean)} of a non-gRPC response with {@code status}. */
  boolean isFailure(int status) {
    Classifier c = classOf(status);
    return c != null ? c.failure() : status >= 500;
  }

  /**
   * Whether a response head is a failure: the first response class that matches its status decides;
   * with none matching, the default rule: a 5xx, or for a gRPC request a failure {@code
   * grpc-status} in the head of a trailers-only response (a status in trailers comes too late to
   * retry on).
   */
  boolean isFailure(HttpResponse head, boolean grpc) {
    int status = head.status().code();
    Classifier c = classOf(status);
    if (c != null) {
      return c.failure();
    }
    return status >= 500 || (grpc && GrpcStatus.isFailure(GrpcStatus.of(head.headers())));
  }

  private Classifier classOf(int status) {
    for (Classifier c : classes) {
      if (c.status().test(status)) {
        return c;
      }
    }
    return null;
  }

  private static IntPredicate compile(ResponseMatch m) {
    return switch (m.getMatchCase()) {
      case ALL -> {
        List<IntPredicate> parts = m.getAll().getMatchesList().stream().map(RouteSnapshot::compile).toList();
        yield s -> parts.stream().allMatch(p -> p.test(s));
      }
      case ANY -> {
        List<IntPredicate> parts = m.getAny().getMatchesList().stream().map(RouteSnapshot::compile).toList();
        yield s -> parts.stream().anyMatch(p -> p.test(s));
      }
      case NOT -> compile(m.getNot()).negate();
      case STATUS -> {
        int min = m.getStatus().getMin();
        int max = m.getStatus().getMax();
        yield s -> s >= min && s <= max;
      }
      case MATCH_NOT_SET -> s -> false;
    };
  }
}
