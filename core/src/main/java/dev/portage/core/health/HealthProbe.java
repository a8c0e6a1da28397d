package dev.portage.core.health;

import dev.portage.core.balance.Endpoint;
import java.util.concurrent.CompletionStage;

/**
 * One health check of one endpoint (an HTTP GET of {@code /healthz}, a TCP connect, a gRPC health
 * call...). Called on the prober's scheduler thread, so it must start the check and return without
 * blocking.
 */
@FunctionalInterface
public interface HealthProbe<T> {

  /**
   * Starts a check of {@code endpoint}. The endpoint passes if the stage completes with {@code true};
   * {@code false}, an exceptional completion, a thrown exception, a null stage and no answer within
   * the prober's timeout all count as failures. A stage that is also a {@link
   * java.util.concurrent.Future} is cancelled when the check times out or the endpoint stops being
   * probed.
   */
  CompletionStage<Boolean> probe(Endpoint<T> endpoint);
}
