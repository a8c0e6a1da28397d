package dev.portage.control.destination;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

/** Counting invalid ServiceProfile entries once per profile revision, with a bounded memory of revisions. */
class ProfileTranslatorTest {
  private static final String BROKEN_ROUTE =
      """
      apiVersion: linkerd.io/v1alpha2
      kind: ServiceProfile
      metadata: {namespace: default, name: %s}
      spec:
        routes:
        - name: broken
          condition: {}
      """;

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final ProfileTranslator translator = new ProfileTranslator(new DestinationMetrics(registry));

  private static Resource profile(int n, long revision) {
    String fqdn = "web" + n + ".default.svc.cluster.local";
    return new Resource(new ResourceKey(KubeKinds.SERVICE_PROFILE, "default", fqdn), revision, "v" + revision,
        Kube.yaml(BROKEN_ROUTE.formatted(fqdn)));
  }

  private void translate(Resource profile) {
    Authority a = Authority.parse(profile.key().name() + ":80", "cluster.local");
    assertThat(translator.translate(a, profile, null).getRoutesList()).isEmpty();
  }

  private double counted() {
    return Metrics.value(registry, "portage_destination_profile_invalid_entries");
  }

  @Test
  void aRevisionIsCountedOnceAndANewRevisionAgain() {
    translate(profile(0, 1));
    translate(profile(0, 1));
    assertThat(counted()).isEqualTo(1);

    translate(profile(0, 2));
    assertThat(counted()).isEqualTo(2);
  }

  @Test
  void theMemoryOfReportedRevisionsIsBounded() {
    for (int i = 0; i <= ProfileTranslator.REPORTED_PROFILES; i++) {
      translate(profile(i, 1));
    }
    assertThat(counted()).isEqualTo(ProfileTranslator.REPORTED_PROFILES + 1);

    // The most recent ones are still remembered; the first one was forgotten, so it counts again.
    translate(profile(ProfileTranslator.REPORTED_PROFILES, 1));
    assertThat(counted()).isEqualTo(ProfileTranslator.REPORTED_PROFILES + 1);
    translate(profile(0, 1));
    assertThat(counted()).isEqualTo(ProfileTranslator.REPORTED_PROFILES + 2);
  }
}
