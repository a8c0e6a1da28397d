package dev.portage.control.rules;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import dev.portage.control.store.KindSnapshot;
import dev.portage.control.store.Resource;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Converts the store's JSON objects of one kind into a {@link TypeSnapshot}: each CRD spec parsed into
 * its proto message (unknown JSON fields ignored). An object whose spec does not parse is left out,
 * logged and counted; it never stops the others. Stateless apart from metrics; thread-safe.
 */
final class SnapshotBuilder {

  private static final Logger log = LoggerFactory.getLogger(SnapshotBuilder.class);
  private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();

  private final RuleMetrics metrics;

  SnapshotBuilder(RuleMetrics metrics) {
    this.metrics = metrics;
  }

  TypeSnapshot build(RuleKind kind, KindSnapshot objects, long changeNanos) {
    List<TypeSnapshot.Entry> entries = new ArrayList<>(objects.items().size());
    for (Resource r : objects.items()) {
      String key = r.key().name() + "/" + r.key().namespace();
      Message spec;
      try {
        spec = parse(kind, r);
      } catch (InvalidProtocolBufferException | RuntimeException e) {
        log.warn("dds: skipping {}: spec does not convert to {}: {}", r.key(), kind.type(), e.getMessage());
        metrics.conversionError(kind.type());
        continue;
      }
      Any data = kind.perClient() ? null : Any.pack(kind.toClient(key, spec));
      entries.add(new TypeSnapshot.Entry(key, r.key().namespace(), data, spec));
    }
    metrics.storeRevision(kind.type(), objects.revision());
    return new TypeSnapshot(kind, objects.revision(), entries, changeNanos);
  }

  private static Message parse(RuleKind kind, Resource r) throws InvalidProtocolBufferException {
    Message.Builder b = kind.newSpecBuilder();
    if (r.spec().isObject()) {
      PARSER.merge(r.spec().toString(), b);
    } else if (!r.spec().isMissingNode() && !r.spec().isNull()) {
      throw new InvalidProtocolBufferException("spec is a " + r.spec().getNodeType() + ", not an object");
    }
    return b.build();
  }
}
