package dev.portage.core.admin;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An HTTP request to the {@link AdminServer}, as handed to an {@link AdminHandler}. Immutable.
 *
 * @param method the request method, upper case ({@code GET}, {@code HEAD}, ...)
 * @param path the decoded path without the query string
 * @param query decoded query parameters; a parameter given without a value maps to {@code [""]}
 * @param headers the request headers (read-only by convention)
 * @param body the request body (at most the server's 64 KiB request limit); treat as immutable
 */
public record AdminRequest(
    String method, String path, Map<String, List<String>> query, HttpHeaders headers, byte[] body) {

  public AdminRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(headers, "headers");
    query = Map.copyOf(Objects.requireNonNull(query, "query"));
    Objects.requireNonNull(body, "body");
  }

  /** A request without a body. */
  public AdminRequest(
      String method, String path, Map<String, List<String>> query, HttpHeaders headers) {
    this(method, path, query, headers, new byte[0]);
  }

  /** Whether the query string names {@code parameter}, with or without a value. */
  public boolean hasParameter(String parameter) {
    return query.containsKey(parameter);
  }

  /** Every value of {@code parameter}, in order; empty when absent. */
  public List<String> parameters(String parameter) {
    return query.getOrDefault(parameter, List.of());
  }
}
