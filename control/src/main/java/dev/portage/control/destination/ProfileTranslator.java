package dev.portage.control.destination;

import dev.portage.core.time.GoDurations;

import com.fasterxml.jackson.databind.JsonNode;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.HttpStatusRange;
import dev.portage.api.linkerd.destination.PathMatch;
import dev.portage.api.linkerd.destination.RequestMatch;
import dev.portage.api.linkerd.destination.ResponseClass;
import dev.portage.api.linkerd.destination.ResponseMatch;
import dev.portage.api.linkerd.destination.RetryBudget;
import dev.portage.api.linkerd.destination.Route;
import dev.portage.api.linkerd.destination.WeightedDst;
import dev.portage.api.linkerd.httptypes.HttpMethod;
import dev.portage.api.linkerd.meta.Metadata;
import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a ServiceProfile (Kubernetes shape) into the {@code DestinationProfile} Linkerd proxies read.
 *
 * <p>Without a profile the answer is the default profile: the FQDN, no routes, the default retry
 * budget (0.2 / 10 per second / 10 s), as Linkerd sends. A route that cannot be translated (no
 * matcher, bad regex, bad status range, bad timeout) is dropped with a WARN and a count, once per
 * revision of the profile (it is translated again for every stream and on every change that touches
 * it); the rest of the profile is still served. Thread-safe.
 */
final class ProfileTranslator {

  private static final Logger log = LoggerFactory.getLogger(ProfileTranslator.class);

  static final RetryBudget DEFAULT_RETRY_BUDGET =
      RetryBudget.newBuilder()
          .setRetryRatio(0.2f)
          .setMinRetriesPerSecond(10)
          .setTtl(ProtoDurations.toProto(Duration.ofSeconds(10)))
          .build();

  /** Profiles remembered as reported; beyond this the least recently translated is forgotten. */
  static final int REPORTED_PROFILES = 4096;

  private final DestinationMetrics metrics;
  // Profile (and whether its routes were skipped for an opaque port) → the store revision whose invalid
  // entries were counted and logged already.
  private final Map<Translation, Long> reported =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Translation, Long> eldest) {
          return size() > REPORTED_PROFILES;
        }
      };

  ProfileTranslator(DestinationMetrics metrics) {
    this.metrics = metrics;
  }

  private record Translation(ResourceKey profile, boolean opaque) {}

  /** True the first time {@code profile}'s current revision is translated this way. */
  private boolean firstTranslation(Resource profile, boolean opaque) {
    synchronized (reported) {
      Long before = reported.put(new Translation(profile.key(), opaque), profile.revision());
      return before == null || before != profile.revision();
    }
  }

  /**
   * @param profile the ServiceProfile named by the FQDN, or null
   * @param service the Service, or null
   */
  DestinationProfile translate(Authority authority, Resource profile, Resource service) {
    DestinationProfile.Builder out =
        DestinationProfile.newBuilder().setFullyQualifiedName(authority.fqdn()).setRetryBudget(DEFAULT_RETRY_BUDGET);
    boolean opaque =
        service != null
            && OpaquePorts.contains(
                service.body().path("metadata").path("annotations").path(KubeKinds.OPAQUE_PORTS_ANNOTATION),
                authority.port());
    if (service != null) {
      out.setParentRef(ref("core", "Service", service, authority.port()));
    }
    if (profile == null) {
      return out.setOpaqueProtocol(opaque).build();
    }
    out.setProfileRef(ref("linkerd.io", "ServiceProfile", profile, 0));
    JsonNode spec = profile.spec();
    opaque |= OpaquePorts.contains(spec.path("opaquePorts"), authority.port());
    boolean report = firstTranslation(profile, opaque);
    out.setOpaqueProtocol(opaque);
    if (!opaque) {
      for (JsonNode r : spec.path("routes")) {
        try {
          out.addRoutes(route(r));
        } catch (IllegalArgumentException e) {
          invalid(report, profile, "route " + r.path("name").asText("?"), e);
        }
      }
    }
    if (spec.path("retryBudget").isObject()) {
      try {
        out.setRetryBudget(retryBudget(spec.path("retryBudget")));
      } catch (IllegalArgumentException e) {
        invalid(report, profile, "retryBudget (default used)", e);
      }
    }
    for (JsonNode d : spec.path("dstOverrides")) {
      try {
        WeightedDst dst = dstOverride(d, authority.port());
        if (dst.getWeight() > 0) {
          out.addDstOverrides(dst);
        }
      } catch (IllegalArgumentException e) {
        invalid(report, profile, "dstOverride " + d.path("authority").asText("?"), e);
      }
    }
    return out.build();
  }

  private void invalid(boolean report, Resource profile, String what, IllegalArgumentException e) {
    if (!report) {
      return;
    }
    metrics.invalidProfileEntry();
    log.warn("ServiceProfile {}: {} skipped: {}", profile.key(), what, e.getMessage());
  }

  static Route route(JsonNode r) {
    Route.Builder b = Route.newBuilder().setCondition(requestMatch(r.path("condition")));
    String name = r.path("name").asText("");
    if (!name.isEmpty()) {
      b.putMetricsLabels("route", name);
    }
    for (JsonNode c : r.path("responseClasses")) {
      b.addResponseClasses(
          ResponseClass.newBuilder()
              .setCondition(responseMatch(c.path("condition")))
              .setIsFailure(c.path("isFailure").asBoolean(false)));
    }
    b.setIsRetryable(r.path("isRetryable").asBoolean(false));
    String timeout = r.path("timeout").asText("");
    if (!timeout.isEmpty()) {
      Duration d = GoDurations.parse(timeout);
      if (d.isNegative()) {
        throw new IllegalArgumentException("timeout: " + timeout + " (expected: >= 0)");
      }
      b.setTimeout(ProtoDurations.toProto(d));
    }
    return b.build();
  }

  static RequestMatch requestMatch(JsonNode c) {
    if (!c.isObject()) {
      throw new IllegalArgumentException("condition: missing (expected: method, pathRegex, all, any or not)");
    }
    List<RequestMatch> parts = new ArrayList<>();
    if (c.has("all")) {
      parts.add(RequestMatch.newBuilder().setAll(requestSeq(c.get("all"))).build());
    }
    if (c.has("any")) {
      parts.add(RequestMatch.newBuilder().setAny(requestSeq(c.get("any"))).build());
    }
    if (c.has("not")) {
      JsonNode not = c.get("not");
      RequestMatch inner =
          not.isArray() ? RequestMatch.newBuilder().setAny(requestSeq(not)).build() : requestMatch(not);
      parts.add(RequestMatch.newBuilder().setNot(inner).build());
    }
    if (c.has("pathRegex")) {
      parts.add(RequestMatch.newBuilder().setPath(PathMatch.newBuilder().setRegex(anchored(c.get("pathRegex").asText()))).build());
    }
    if (c.has("method")) {
      parts.add(RequestMatch.newBuilder().setMethod(method(c.get("method").asText())).build());
    }
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("condition: " + c + " (expected: method, pathRegex, all, any or not)");
    }
    // Several fields in one condition must all hold, as in Linkerd.
    return parts.size() == 1
        ? parts.get(0)
        : RequestMatch.newBuilder().setAll(RequestMatch.Seq.newBuilder().addAllMatches(parts)).build();
  }

  private static RequestMatch.Seq requestSeq(JsonNode list) {
    if (!list.isArray()) {
      throw new IllegalArgumentException("all/any: " + list + " (expected: a list of conditions)");
    }
    RequestMatch.Seq.Builder s = RequestMatch.Seq.newBuilder();
    for (JsonNode m : list) {
      s.addMatches(requestMatch(m));
    }
    return s.build();
  }

  /** Anchors a path regex as {@code ^…$} (Linkerd matches the whole path) and checks it compiles. */
  static String anchored(String regex) {
    String r = regex;
    if (!r.startsWith("^")) {
      r = "^" + r;
    }
    if (!r.endsWith("$") || r.endsWith("\\$")) {
      r = r + "$";
    }
    try {
      Pattern.compile(r);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException("pathRegex: " + regex + " (expected: a valid regex: " + e.getDescription() + ")");
    }
    return r;
  }

  static HttpMethod method(String m) {
    if (m.isEmpty()) {
      throw new IllegalArgumentException("method: empty (expected: e.g. GET)");
    }
    String upper = m.toUpperCase(Locale.ROOT);
    for (HttpMethod.Registered r : HttpMethod.Registered.values()) {
      if (r != HttpMethod.Registered.UNRECOGNIZED && r.name().equals(upper)) {
        return HttpMethod.newBuilder().setRegistered(r).build();
      }
    }
    return HttpMethod.newBuilder().setUnregistered(m).build();
  }

  static ResponseMatch responseMatch(JsonNode c) {
    if (!c.isObject()) {
      throw new IllegalArgumentException("response condition: missing (expected: status, all, any or not)");
    }
    List<ResponseMatch> parts = new ArrayList<>();
    if (c.has("all")) {
      parts.add(ResponseMatch.newBuilder().setAll(responseSeq(c.get("all"))).build());
    }
    if (c.has("any")) {
      parts.add(ResponseMatch.newBuilder().setAny(responseSeq(c.get("any"))).build());
    }
    if (c.has("not")) {
      JsonNode not = c.get("not");
      ResponseMatch inner =
          not.isArray() ? ResponseMatch.newBuilder().setAny(responseSeq(not)).build() : responseMatch(not);
      parts.add(ResponseMatch.newBuilder().setNot(inner).build());
    }
    if (c.has("status")) {
      JsonNode s = c.get("status");
      int min = s.path("min").asInt(100);
      int max = s.path("max").asInt(599);
      if (min < 100 || max > 599 || min > max) {
        throw new IllegalArgumentException("status: " + s + " (expected: 100 <= min <= max <= 599)");
      }
      parts.add(ResponseMatch.newBuilder().setStatus(HttpStatusRange.newBuilder().setMin(min).setMax(max)).build());
    }
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("response condition: " + c + " (expected: status, all, any or not)");
    }
    return parts.size() == 1
        ? parts.get(0)
        : ResponseMatch.newBuilder().setAll(ResponseMatch.Seq.newBuilder().addAllMatches(parts)).build();
  }

  private static ResponseMatch.Seq responseSeq(JsonNode list) {
    if (!list.isArray()) {
      throw new IllegalArgumentException("all/any: " + list + " (expected: a list of conditions)");
    }
    ResponseMatch.Seq.Builder s = ResponseMatch.Seq.newBuilder();
    for (JsonNode m : list) {
      s.addMatches(responseMatch(m));
    }
    return s.build();
  }

  static RetryBudget retryBudget(JsonNode b) {
    RetryBudget.Builder out = DEFAULT_RETRY_BUDGET.toBuilder();
    if (b.has("retryRatio")) {
      double ratio = b.get("retryRatio").asDouble(Double.NaN);
      if (!(ratio >= 0)) {
        throw new IllegalArgumentException("retryRatio: " + b.get("retryRatio") + " (expected: a number >= 0)");
      }
      out.setRetryRatio((float) ratio);
    }
    if (b.has("minRetriesPerSecond")) {
      long min = b.get("minRetriesPerSecond").asLong(-1);
      if (min < 0 || min > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException(
            "minRetriesPerSecond: " + b.get("minRetriesPerSecond") + " (expected: an integer >= 0)");
      }
      out.setMinRetriesPerSecond((int) min);
    }
    if (b.has("ttl")) {
      Duration ttl = GoDurations.parse(b.get("ttl").asText(""));
      if (ttl.isNegative()) {
        throw new IllegalArgumentException("ttl: " + b.get("ttl") + " (expected: >= 0)");
      }
      out.setTtl(ProtoDurations.toProto(ttl));
    }
    return out.build();
  }

  static WeightedDst dstOverride(JsonNode d, int servicePort) {
    String authority = d.path("authority").asText("");
    if (authority.isEmpty()) {
      throw new IllegalArgumentException("authority: missing (expected: host[:port])");
    }
    // Linkerd gives a port-less override the port the client asked for.
    if (authority.lastIndexOf(':') < 0) {
      authority = authority + ":" + servicePort;
    }
    long weight = Quantity.milliValue(d.get("weight"));
    return WeightedDst.newBuilder().setAuthority(authority).setWeight((int) weight).build();
  }

  private static Metadata ref(String group, String kind, Resource r, int port) {
    return Metadata.newBuilder()
        .setResource(
            dev.portage.api.linkerd.meta.Resource.newBuilder()
                .setGroup(group)
                .setKind(kind)
                .setName(r.key().name())
                .setNamespace(r.key().namespace())
                .setPort(port))
        .build();
  }
}
