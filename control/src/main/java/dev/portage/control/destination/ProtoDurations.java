package dev.portage.control.destination;

import java.time.Duration;

/** Java durations in their protobuf form. */
final class ProtoDurations {

  private ProtoDurations() {}

  static com.google.protobuf.Duration toProto(Duration d) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }
}
