package dev.portage.hub.local;

import dev.portage.hub.codec.CodecException;
import dev.portage.hub.codec.Encoding;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.proxy.HttpResponses;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers with one object in the first encoding the client accepts that the object can be given
 * in: the encoding it is held in, or the other one when {@link KubeCodec} can convert it (every
 * built-in kind; custom resources stay JSON). Nothing acceptable: 406 NotAcceptable, as the API
 * server answers. Thread-safe.
 */
final class ObjectRenderer {

  private static final Logger log = LoggerFactory.getLogger(ObjectRenderer.class);

  private final KubeCodec codec;

  ObjectRenderer(KubeCodec codec) {
    this.codec = codec;
  }

  /** {@code body}, held in {@code held}, as a response with {@code code}. */
  FullHttpResponse render(int code, byte[] body, Encoding held, List<Encoding> acceptable,
      String what) {
    for (Encoding e : acceptable) {
      if (e == held) {
        return HttpResponses.of(code, e.contentType(), body);
      }
      try {
        return HttpResponses.of(code, e.contentType(), codec.convert(body, held, e));
      } catch (CodecException ex) {
        log.debug("{} cannot be answered in {}: {}", what, e, ex.getMessage());
      }
    }
    return notAcceptable(acceptable, what);
  }

  static FullHttpResponse notAcceptable(List<Encoding> acceptable, String what) {
    return HttpResponses.status(406, "NotAcceptable", "hub: " + what + " cannot be answered in "
        + (acceptable.isEmpty() ? "any type the request's Accept header allows"
            : acceptable.get(0).contentType())
        + " (the hub answers JSON, and protobuf for built-in kinds)");
  }
}
