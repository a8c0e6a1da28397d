package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpProtocol;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * One request travelling down the stack: the head (hop-by-hop headers already stripped), its
 * logical authority, its body, and what the layers learned on the way (profile, route, the concrete
 * authority chosen by the split). Layers set their fields before calling the next layer; the
 * cancellation hooks may be used from any thread.
 */
final class ProxyRequest {

  final HttpRequest head;
  final String authority;
  final HttpProtocol protocol;
  final RequestBody body;
  final EventLoop loop;
  final long startNanos;

  volatile ProfileSnapshot profile = ProfileSnapshot.DEFAULT;
  volatile RouteSnapshot route = RouteSnapshot.DEFAULT;
  volatile String concreteAuthority;
  /** Times the fail-fast layer found an endpoint ready that the pick then did not get. */
  int readyRechecks;
  /**
   * The ticker at the head of the response the stack answers with: set by the attempt that got it,
   * before its answer goes up (so whoever hears the answer sees it), read for the route latency.
   */
  long responseHeadNanos;

  private final boolean grpc;
  private Runnable onCancel; // guarded by this; the one hook most requests ever have
  private List<Runnable> moreOnCancel; // guarded by this; made for a second hook
  private volatile boolean cancelled; // written under this; read without (a check per attempt)

  ProxyRequest(
      HttpRequest head, String authority, HttpProtocol protocol, RequestBody body, EventLoop loop,
      long startNanos, boolean grpc) {
    this.head = head;
    this.authority = authority;
    this.protocol = protocol;
    this.body = body;
    this.loop = loop;
    this.startNanos = startNanos;
    this.concreteAuthority = authority;
    this.grpc = grpc;
  }

  /**
   * Runs {@code hook} when the request is cancelled (timeout, client gone), at once if it already
   * is. Hooks run on the cancelling thread and must not block.
   */
  void onCancel(Runnable hook) {
    boolean now;
    synchronized (this) {
      now = cancelled;
      if (!now) {
        if (onCancel == null && (moreOnCancel == null || moreOnCancel.isEmpty())) {
          onCancel = hook; // (hooks run in the order they were added)
        } else {
          if (moreOnCancel == null) {
            moreOnCancel = new ArrayList<>(2);
          }
          moreOnCancel.add(hook);
        }
      }
    }
    if (now) {
      hook.run();
    }
  }

  /** Removes a hook added by {@link #onCancel} once the work it would stop has ended. */
  synchronized void removeOnCancel(Runnable hook) {
    if (onCancel == hook) {
      onCancel = null;
    } else if (moreOnCancel != null) {
      moreOnCancel.remove(hook);
    }
  }

  void cancel() {
    List<Runnable> hooks;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelled = true;
      hooks = new ArrayList<>(2);
      if (onCancel != null) {
        hooks.add(onCancel);
      }
      if (moreOnCancel != null) {
        hooks.addAll(moreOnCancel);
      }
      onCancel = null;
      moreOnCancel = null;
    }
    hooks.forEach(Runnable::run);
  }

  /**
   * Whether this is a gRPC request (its responses are classified by {@code grpc-status}), as the
   * inbound side found it ({@link GrpcStatus#isGrpc}).
   */
  boolean isGrpc() {
    return grpc;
  }

  boolean isCancelled() {
    return cancelled;
  }

  @Override
  public String toString() {
    return head.method() + " " + authority + head.uri();
  }
}
