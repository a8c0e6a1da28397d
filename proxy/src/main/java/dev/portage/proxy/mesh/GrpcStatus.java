package dev.portage.proxy.mesh;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

/**
 * gRPC facts the sidecar classifies responses by, as Linkerd does: which requests are gRPC, the
 * {@code grpc-status} of a response (trailers, or the head of a trailers-only response), which codes
 * are failures, and which codes make peak-EWMA charge its failure penalty.
 */
final class GrpcStatus {

  /** No {@code grpc-status} (absent or not a number). */
  static final int NONE = -1;

  private static final AsciiString GRPC_STATUS = AsciiString.cached("grpc-status");
  private static final AsciiString APPLICATION_GRPC = AsciiString.cached("application/grpc");

  private GrpcStatus() {}

  /**
   * Whether a request whose (first) {@code content-type} is {@code contentType} is gRPC: {@code
   * application/grpc} or {@code application/grpc+…} (any case).
   */
  static boolean isGrpc(CharSequence contentType) {
    return contentType != null && contentType.length() >= APPLICATION_GRPC.length()
        && AsciiString.regionMatches(contentType, true, 0, APPLICATION_GRPC, 0, APPLICATION_GRPC.length());
  }

  /** The {@code grpc-status} in {@code headers}, or {@link #NONE}. */
  static int of(HttpHeaders headers) {
    String v = headers.get(GRPC_STATUS);
    if (v == null || v.isEmpty() || v.length() > 3) {
      return NONE;
    }
    int code = 0;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return NONE;
      }
      code = code * 10 + (c - '0');
    }
    return code;
  }

  /**
   * Whether {@code code} is a failure (Linkerd: UNKNOWN 2, DEADLINE_EXCEEDED 4, PERMISSION_DENIED 7,
   * INTERNAL 13, UNAVAILABLE 14, DATA_LOSS 15); every other code, and none at all, is a success.
   */
  static boolean isFailure(int code) {
    return code == 2 || code == 4 || code == 7 || code == 13 || code == 14 || code == 15;
  }

  /**
   * Whether a trailers-only response with {@code code} costs peak-EWMA its failure penalty
   * (Linkerd's load biaser: RESOURCE_EXHAUSTED 8, UNAVAILABLE 14, UNKNOWN 2, DEADLINE_EXCEEDED 4,
   * INTERNAL 13, DATA_LOSS 15).
   */
  static boolean isPenalized(int code) {
    return code == 8 || code == 14 || code == 2 || code == 4 || code == 13 || code == 15;
  }
}
