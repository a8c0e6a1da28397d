package dev.portage.control.destination;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Records what a client stream receives; waits (bounded) for messages that cross threads. */
final class Recorder<T> implements ClientResponseObserver<Object, T> {

  private final LinkedBlockingQueue<T> messages = new LinkedBlockingQueue<>();
  private final CompletableFuture<Status> end = new CompletableFuture<>();
  private volatile ClientCallStreamObserver<Object> call;

  @Override
  public void beforeStart(ClientCallStreamObserver<Object> requestStream) {
    call = requestStream;
  }

  @Override
  public void onNext(T value) {
    messages.add(value);
  }

  @Override
  public void onError(Throwable t) {
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end.complete(Status.OK);
  }

  /** The next message, waiting up to 10 s. */
  T next() {
    try {
      T m = messages.poll(10, TimeUnit.SECONDS);
      assertThat(m).as("a message within 10 s (stream ended with %s)", end.getNow(null)).isNotNull();
      return m;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** The next message if one is already here. */
  T poll() {
    return messages.poll();
  }

  /** How the stream ended, waiting up to 10 s. */
  Status awaitEnd() {
    try {
      return end.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("stream did not end within 10 s", e);
    }
  }

  boolean ended() {
    return end.isDone();
  }

  void cancel() {
    call.cancel("test cancels", null);
  }
}
