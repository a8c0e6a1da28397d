package dev.portage.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ContainerfileTest {
  private static final Path ROOT = RepoRoot.find();

  @Test
  void containerfileBuildsTheCliJarOnAJreAsANumericNonRootUser() throws IOException {
    List<String> problems = ContainerfileCheck.problems(ContainerBuildFile.parse(ROOT.resolve("Containerfile")), projectVersion());

    assertThat(problems).isEmpty();
  }

  @Test
  void theImageStartsTheJvmWithTheLaunchersDefaults() throws IOException {
    // bin/portage's jvm_defaults (the options every Java version gets) are the ones the check requires.
    String launcher = Files.readString(ROOT.resolve("bin/portage"));
    Matcher m = Pattern.compile("(?m)^jvm_defaults=\\(([^)]*)\\)$").matcher(launcher);
    assertThat(m.find()).as("jvm_defaults=(...) in bin/portage").isTrue();

    assertThat(ContainerfileCheck.JVM_DEFAULTS).containsExactly(m.group(1).trim().split("\\s+"));
  }

  @Test
  void dockerignoreKeepsBuildOutputAndGitOutOfTheContext() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve(".dockerignore"));

    assertThat(lines).contains(".git", "**/target");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "root user|USER 10001:10001|USER root|runtime USER 'root' (expected: a numeric non-zero UID",
      "uid 0|USER 10001:10001|USER 0|runtime USER '0'",
      "JDK 17 build|maven:3.9-eclipse-temurin-21 AS build|maven:3.9-eclipse-temurin-17 AS build|build stage FROM docker.io/library/maven:3.9-eclipse-temurin-17",
      "JDK runtime|eclipse-temurin:21-jre|eclipse-temurin:21-jdk|runtime stage FROM docker.io/library/eclipse-temurin:21-jdk (expected: a JRE 21+ image)",
      "other build command|-pl cli -am package -DskipTests|-pl cli package|no RUN with 'mvn -B -ntp -pl cli -am package -DskipTests'",
      "shell-form entrypoint|ENTRYPOINT [\"java\", \"-XX:MaxRAMPercentage=75\", \"--enable-native-access=ALL-UNNAMED\", \"-XX:PerMethodTrapLimit=0\", \"-XX:PerBytecodeTrapLimit=0\", \"-jar\", \"/opt/portage/portage.jar\"]|ENTRYPOINT java -jar /opt/portage/portage.jar|(expected: exec form",
      "entrypoint without the launcher's JIT defaults|\"-XX:PerBytecodeTrapLimit=0\", |\"-XX:PerBytecodeTrapLimit=4\", |ENTRYPOINT lacks -XX:PerBytecodeTrapLimit=0 (bin/portage's JVM defaults",
      "entrypoint on another jar|\"-jar\", \"/opt/portage/portage.jar\"]|\"-jar\", \"/opt/portage/app.jar\"]|(expected: java ... -jar /opt/portage/portage.jar)",
      "image tag not the project version|portage:0.1.0\"|portage:9.9.9\"|LABEL dev.portage.image=ghcr.io/portage-dev/portage:9.9.9 (expected: tag 0.1.0",
  })
  void aBrokenContainerfileIsReported(String name, String from, String to, String expected, @TempDir Path tmp) throws IOException {
    String text = Files.readString(ROOT.resolve("Containerfile"));
    assertThat(text).as("anchor of case %s", name).contains(from);
    Path broken = tmp.resolve("Containerfile");
    Files.writeString(broken, text.replace(from, to));

    List<String> problems = ContainerfileCheck.problems(ContainerBuildFile.parse(broken), projectVersion());

    assertThat(problems).anySatisfy(p -> assertThat(p).contains(expected));
  }

  /** The Maven project version, from the CLI's filtered resource (what {@code portage --version} prints). */
  private static String projectVersion() throws IOException {
    Properties p = new Properties();
    try (InputStream in = ContainerfileTest.class.getResourceAsStream("/portage-version.properties")) {
      assertThat(in).as("portage-version.properties on the test classpath").isNotNull();
      p.load(in);
    }
    return p.getProperty("version");
  }
}
