package dev.portage.hub.codec;

/**
 * A body that cannot be decoded or converted: not protobuf, malformed JSON, a kind without a
 * protobuf form. The message says what was wrong.
 */
public final class CodecException extends Exception {

  public CodecException(String message) {
    super(message, null, false, false);
  }
}
