package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AbsoluteFormTest {

  @Test
  void authorityOfAbsoluteTargetsOnly() {
    assertThat(AbsoluteForm.authority("http://web:8080/x?y")).isEqualTo("web:8080");
    assertThat(AbsoluteForm.authority("HTTPS://Web/")).isEqualTo("Web");
    assertThat(AbsoluteForm.authority("http://web?q")).isEqualTo("web");
    assertThat(AbsoluteForm.authority("http://[::1]:80")).isEqualTo("[::1]:80");
    assertThat(AbsoluteForm.authority("/x")).isNull();
    assertThat(AbsoluteForm.authority("*")).isNull();
    assertThat(AbsoluteForm.authority("ftp://web/x")).isNull();
    assertThat(AbsoluteForm.authority("http:///x")).as("empty authority").isNull();
    assertThat(AbsoluteForm.authority("http://user@web/x")).as("user information").isNull();
  }

  @Test
  void sameAuthorityFillsInTheSchemesDefaultPortAndIgnoresCase() {
    assertThat(AbsoluteForm.sameAuthority("http://web/x", "web", "WEB:80")).isTrue();
    assertThat(AbsoluteForm.sameAuthority("http://web:80/x", "web:80", "web")).isTrue();
    assertThat(AbsoluteForm.sameAuthority("https://web/x", "web", "web:443")).isTrue();
    assertThat(AbsoluteForm.sameAuthority("http://web:8080/x", "web:8080", "web")).isFalse();
    assertThat(AbsoluteForm.sameAuthority("http://a/x", "a", "b")).isFalse();
    assertThat(AbsoluteForm.sameAuthority("http://[::1]/x", "[::1]", "[::1]:80")).isTrue();
  }

  @Test
  void originFormKeepsPathAndQueryAndDropsTheFragment() {
    assertThat(AbsoluteForm.originForm("http://web:8080/x/y?z=1")).isEqualTo("/x/y?z=1");
    assertThat(AbsoluteForm.originForm("http://web")).isEqualTo("/");
    assertThat(AbsoluteForm.originForm("http://web?q=1")).isEqualTo("/?q=1");
    assertThat(AbsoluteForm.originForm("http://web/p#frag")).isEqualTo("/p");
  }
}
