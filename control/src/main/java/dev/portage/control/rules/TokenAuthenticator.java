package dev.portage.control.rules;

import java.util.concurrent.CompletionStage;

/**
 * Checks a bearer token a dds client presented ({@code authorization: Bearer <token>} with {@code
 * authorization-type: kubernetes}) and says who it belongs to. Implementations must not block the
 * caller: the result completes later, on any thread; a failed stage (with a message fit for the
 * client) means the token is not valid. Thread-safe.
 */
@FunctionalInterface
public interface TokenAuthenticator {

  CompletionStage<ClientIdentity> authenticate(String token);
}
