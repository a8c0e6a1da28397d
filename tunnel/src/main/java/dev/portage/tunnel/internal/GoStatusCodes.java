package dev.portage.tunnel.internal;

import io.grpc.Status;
import java.util.Locale;

/**
 * gRPC status codes as grpc-go spells them ({@code codes.Code.String()}: {@code Canceled},
 * {@code DeadlineExceeded}, {@code Unavailable}), which upstream's {@code stream_errors_total{code}}
 * label carries. Stateless.
 */
public final class GoStatusCodes {
  private GoStatusCodes() {}

  /** grpc-go's name of {@code code}. */
  public static String name(Status.Code code) {
    if (code == Status.Code.CANCELLED) {
      return "Canceled"; // grpc-java spells it CANCELLED
    }
    if (code == Status.Code.OK) {
      return "OK";
    }
    StringBuilder sb = new StringBuilder();
    for (String part : code.name().split("_")) {
      sb.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
    }
    return sb.toString();
  }
}
