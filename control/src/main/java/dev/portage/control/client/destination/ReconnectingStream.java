package dev.portage.control.client.destination;

import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.core.backoff.Backoff;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server stream of the Destination API that reconnects: after any end except INVALID_ARGUMENT and
 * FAILED_PRECONDITION it waits the next backoff delay and calls again; the backoff restarts once a
 * stream has been established (its first message arrived). Subclasses turn messages into listener
 * calls through {@link #onStreamStarted()} and {@link #onMessage}.
 *
 * <p>Threading: all state is confined to the client's {@link SynchronizationContext}; timers run on the
 * injected scheduler and hop into it.
 */
abstract class ReconnectingStream<T> implements DestinationWatch {

  private static final Logger log = LoggerFactory.getLogger(ReconnectingStream.class);

  private final Channel channel;
  private final MethodDescriptor<GetDestination, T> method;
  private final GetDestination request;
  private final SynchronizationContext sync;
  private final ScheduledExecutorService scheduler;
  private final Backoff backoff;
  private final Consumer<ReconnectingStream<?>> onClosed;
  private volatile boolean closed;

  // Confined to sync.
  private ClientCall<GetDestination, T> call;
  private SynchronizationContext.ScheduledHandle retry;
  private boolean established;
  /** A stream ended and no new one has delivered a message yet (sync-confined, like established). */
  private boolean lost;

  ReconnectingStream(
      Channel channel,
      MethodDescriptor<GetDestination, T> method,
      GetDestination request,
      SynchronizationContext sync,
      ScheduledExecutorService scheduler,
      Backoff backoff,
      Consumer<ReconnectingStream<?>> onClosed) {
    this.channel = channel;
    this.method = method;
    this.request = request;
    this.sync = sync;
    this.scheduler = scheduler;
    this.backoff = backoff;
    this.onClosed = onClosed;
  }

  /** A new stream is starting; the next message is the first of it. */
  abstract void onStreamStarted();

  /** One message of the current stream. */
  abstract void onMessage(T message);

  /** The watch ended for good with this status. */
  abstract void onTerminalError(Status status);

  @Override
  public final String authority() {
    return request.getPath();
  }

  final boolean isClosed() {
    return closed;
  }

  final void start() {
    sync.execute(this::connect);
  }

  @Override
  public final void close() {
    if (closed) {
      return;
    }
    closed = true;
    sync.execute(
        () -> {
          if (call != null) {
            call.cancel("watch closed", null);
            call = null;
          }
          if (retry != null) {
            retry.cancel();
            retry = null;
          }
          onClosed.accept(this);
        });
  }

  private void connect() {
    retry = null;
    if (closed) {
      return;
    }
    established = false;
    ClientCall<GetDestination, T> c = channel.newCall(method, CallOptions.DEFAULT);
    call = c;
    onStreamStarted();
    c.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(T message) {
            sync.execute(() -> received(c, message));
            c.request(1);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            sync.execute(() -> ended(c, status));
          }
        },
        new Metadata());
    c.sendMessage(request);
    c.halfClose();
    c.request(1);
  }

  private void received(ClientCall<GetDestination, T> c, T message) {
    if (c != call || closed) {
      return;
    }
    if (!established) {
      established = true;
      backoff.reset();
      if (lost) {
        lost = false;
        log.info("destination stream {} re-established", authority());
      } else {
        log.debug("destination stream {} established", authority());
      }
    }
    onMessage(message);
  }

  private void ended(ClientCall<GetDestination, T> c, Status status) {
    if (c != call || closed) {
      return;
    }
    call = null;
    if (status.getCode() == Status.Code.INVALID_ARGUMENT || status.getCode() == Status.Code.FAILED_PRECONDITION) {
      log.warn("destination watch {} failed for good: {}", authority(), status);
      closed = true;
      onTerminalError(status);
      onClosed.accept(this);
      return;
    }
    long delay = backoff.nextDelayNanos();
    if (!lost) {
      // One WARN per outage: the control plane being away matters to an operator, each retry doesn't.
      lost = true;
      log.warn("destination stream {} lost ({}); keeping the last answer, reconnecting with backoff",
          authority(), status);
    } else {
      log.debug("destination stream {} ended ({}); reconnecting in {} ms", authority(), status, delay / 1_000_000);
    }
    retry = sync.schedule(this::connect, delay, TimeUnit.NANOSECONDS, scheduler);
  }
}
