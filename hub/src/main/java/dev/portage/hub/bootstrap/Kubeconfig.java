package dev.portage.hub.bootstrap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * What the hub reads of a kubeconfig file (YAML or JSON): of the current context (else the only
 * one), the cluster's CA and the user's bearer token and client certificate, each given inline
 * ({@code *-data}, base64) or as a file (relative paths resolve against the kubeconfig's
 * directory, as kubectl does). Immutable.
 *
 * @param ca PEM bytes of the cluster CA; null when the cluster names none
 * @param token the user's bearer token ({@code token} or {@code tokenFile}); "" for none
 * @param clientCert PEM client certificate chain; null for none
 * @param clientKey PEM key of {@code clientCert}; null for none
 */
record Kubeconfig(byte[] ca, String token, byte[] clientCert, byte[] clientKey) {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** Largest kubeconfig read: a bootstrap kubeconfig is a few KiB. */
  private static final long MAX_BYTES = 1024 * 1024;

  /**
   * Reads {@code file}.
   *
   * @throws IOException naming the file and what is missing or malformed
   */
  static Kubeconfig read(Path file) throws IOException {
    if (Files.size(file) > MAX_BYTES) {
      throw new IOException("bootstrap file " + file + ": over " + MAX_BYTES + " bytes");
    }
    JsonNode root;
    try {
      root = YAML.readTree(Files.readAllBytes(file));
    } catch (IOException e) {
      throw new IOException("bootstrap file " + file + ": not a kubeconfig: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IOException("bootstrap file " + file + ": not a kubeconfig (expected: a YAML map)");
    }
    JsonNode context = named(root, "contexts", root.path("current-context").asText(""), "context");
    if (context == null) {
      throw new IOException("bootstrap file " + file + ": no context (expected: current-context"
          + " naming one of contexts, or exactly one context)");
    }
    Path dir = file.toAbsolutePath().getParent();
    JsonNode cluster = named(root, "clusters", context.path("cluster").asText(""), "cluster");
    JsonNode user = named(root, "users", context.path("user").asText(""), "user");
    byte[] ca = cluster == null ? null
        : inlineOrFile(cluster, "certificate-authority", dir, file);
    String token = "";
    byte[] cert = null;
    byte[] key = null;
    if (user != null) {
      token = user.path("token").asText("");
      if (token.isEmpty() && !user.path("tokenFile").asText("").isEmpty()) {
        token = Files.readString(dir.resolve(user.path("tokenFile").asText()),
            StandardCharsets.UTF_8).strip();
      }
      cert = inlineOrFile(user, "client-certificate", dir, file);
      key = inlineOrFile(user, "client-key", dir, file);
    }
    if ((cert == null) != (key == null)) {
      throw new IOException("bootstrap file " + file
          + ": client-certificate and client-key: give both or neither");
    }
    return new Kubeconfig(ca, token, cert, key);
  }

  /**
   * The {@code section} of the entry of {@code list} named {@code name} ({@code contexts[].context}
   * ...); with no name, the only entry; null when there is none.
   */
  private static JsonNode named(JsonNode root, String list, String name, String section) {
    JsonNode entries = root.path(list);
    if (!entries.isArray() || entries.isEmpty()) {
      return null;
    }
    if (name.isEmpty()) {
      return entries.size() == 1 ? entries.get(0).path(section) : null;
    }
    for (JsonNode e : entries) {
      if (e.path("name").asText("").equals(name)) {
        return e.path(section);
      }
    }
    return null;
  }

  private static byte[] inlineOrFile(JsonNode node, String field, Path dir, Path file)
      throws IOException {
    String data = node.path(field + "-data").asText("");
    if (!data.isEmpty()) {
      try {
        return Base64.getMimeDecoder().decode(data);
      } catch (IllegalArgumentException e) {
        throw new IOException("bootstrap file " + file + ": " + field + "-data is not base64", e);
      }
    }
    String path = node.path(field).asText("");
    return path.isEmpty() ? null : Files.readAllBytes(dir.resolve(path));
  }
}
