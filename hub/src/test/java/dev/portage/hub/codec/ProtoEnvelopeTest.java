package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The {@code k8s\0} + {@code runtime.Unknown} body, byte for byte as kube-apiserver writes it. */
class ProtoEnvelopeTest {

  @Test
  void encodesLikeTheApiServer() {
    V1.Pod pod = V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setName("p")).build();
    byte[] body = ProtoEnvelope.encode("v1", "Pod", pod.toByteString());
    String hex = HexFormat.of().formatHex(body);
    // magic, typeMeta {apiVersion "v1", kind "Pod"}, raw, then the empty fields 3 and 4.
    assertThat(hex).startsWith("6b387300" + "0a09" + "0a027631" + "1203506f64" + "1205");
    assertThat(hex).endsWith("1a002200");
    ProtoEnvelope.Decoded d = assertDecodes(body);
    assertThat(d.apiVersion()).isEqualTo("v1");
    assertThat(d.kind()).isEqualTo("Pod");
    assertThat(d.raw()).isEqualTo(pod.toByteString());
  }

  private static ProtoEnvelope.Decoded assertDecodes(byte[] body) {
    try {
      return ProtoEnvelope.decode(body);
    } catch (CodecException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void refusesWhatIsNotAnEnvelope() {
    assertThatThrownBy(() -> ProtoEnvelope.decode("{}".getBytes()))
        .isInstanceOf(CodecException.class).hasMessageContaining("does not appear to be a protobuf");
    assertThatThrownBy(() -> ProtoEnvelope.decode(new byte[] {0x6b, 0x38, 0x73}))
        .isInstanceOf(CodecException.class).hasMessageContaining("does not appear to be a protobuf");
    assertThatThrownBy(() -> ProtoEnvelope.decode(new byte[] {0x6b, 0x38, 0x73, 0x00}))
        .isInstanceOf(CodecException.class).hasMessage("empty body");
    assertThatThrownBy(() -> ProtoEnvelope.decode(new byte[] {0x6b, 0x38, 0x73, 0x00, 0x0a, 0x7f}))
        .isInstanceOf(CodecException.class).hasMessageContaining("malformed");
    assertThat(ProtoEnvelope.hasMagic(ProtoEnvelope.encode("v1", "Pod", ByteString.EMPTY))).isTrue();
  }
}
