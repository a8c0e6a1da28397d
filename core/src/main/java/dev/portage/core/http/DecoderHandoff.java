package dev.portage.core.http;

import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.List;

/**
 * When a codec with a {@link PlainHead} fast path may use it: only between messages, and never
 * again once Netty's decoder has failed. Netty's decoder keeps its own state inside a message it has
 * begun, so it gets every byte until that message ends; after a failure it drops all input, and the
 * connection must see exactly that. Confined to the channel's event loop.
 */
final class DecoderHandoff {

  /** Netty's decoder holds a message it has begun. */
  private boolean delegating;

  /** Netty's decoder failed. */
  private boolean failed;

  /** Whether the next bytes start a message the fast path may try. */
  boolean fastPathOpen() {
    return !delegating && !failed;
  }

  /** Called before bytes go to Netty's decoder. */
  void delegate() {
    delegating = true;
  }

  /** Looks at what Netty's decoder just added to {@code out} from index {@code from} on. */
  void decoded(List<Object> out, int from) {
    for (int i = from; i < out.size(); i++) {
      Object o = out.get(i);
      if (o instanceof HttpObject h && h.decoderResult().isFailure()) {
        failed = true;
      }
      if (o instanceof LastHttpContent) {
        delegating = false;
      }
    }
  }
}
