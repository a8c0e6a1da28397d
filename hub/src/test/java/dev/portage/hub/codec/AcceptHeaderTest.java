package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Negotiation of the hub's own answers, for the Accept headers Kubernetes clients send. */
class AcceptHeaderTest {

  @Test
  void clientGoPrefersProtobufAndFallsBackToJson() {
    assertThat(AcceptHeader.acceptable("application/vnd.kubernetes.protobuf,application/json"))
        .containsExactly(Encoding.PROTOBUF, Encoding.JSON);
    assertThat(AcceptHeader.acceptable("application/vnd.kubernetes.protobuf, */*"))
        .containsExactly(Encoding.PROTOBUF, Encoding.JSON);
    assertThat(AcceptHeader.acceptable("application/vnd.kubernetes.protobuf"))
        .containsExactly(Encoding.PROTOBUF);
  }

  @Test
  void jsonClientsAndWildcardsGetJson() {
    assertThat(AcceptHeader.acceptable("application/json")).containsExactly(Encoding.JSON);
    assertThat(AcceptHeader.acceptable("*/*")).containsExactly(Encoding.JSON);
    assertThat(AcceptHeader.acceptable("")).containsExactly(Encoding.JSON);
    assertThat(AcceptHeader.acceptable(null)).containsExactly(Encoding.JSON);
    assertThat(AcceptHeader.acceptable("application/json, */*")).containsExactly(Encoding.JSON);
  }

  @Test
  void conversionsTheHubCannotMakeAreSkipped() {
    assertThat(AcceptHeader.acceptable("application/json;as=Table;v=v1;g=meta.k8s.io,"
        + "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"))
        .containsExactly(Encoding.JSON);
    assertThat(AcceptHeader.acceptable("application/json;as=Table;v=v1;g=meta.k8s.io")).isEmpty();
    assertThat(AcceptHeader.acceptable("application/yaml")).isEmpty();
    assertThat(AcceptHeader.acceptable("application/json;q=0, application/vnd.kubernetes.protobuf"))
        .containsExactly(Encoding.PROTOBUF);
  }

  @Test
  void responseContentTypes() {
    assertThat(Encoding.ofContentType("application/vnd.kubernetes.protobuf"))
        .isEqualTo(Encoding.PROTOBUF);
    assertThat(Encoding.ofContentType("application/vnd.kubernetes.protobuf;stream=watch"))
        .isEqualTo(Encoding.PROTOBUF);
    assertThat(Encoding.ofContentType("application/json")).isEqualTo(Encoding.JSON);
    assertThat(Encoding.ofContentType(null)).isEqualTo(Encoding.JSON);
    assertThat(Encoding.ofContentType("application/json;as=Table;v=v1;g=meta.k8s.io")).isNull();
    assertThat(Encoding.ofContentType(
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"))
        .isNull();
    assertThat(Encoding.ofContentType("text/plain")).isNull();
  }
}
