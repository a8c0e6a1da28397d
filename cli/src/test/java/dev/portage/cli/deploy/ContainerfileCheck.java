package dev.portage.cli.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the structure of the container build file (no container engine here): a Maven + JDK 21+
 * build stage running the project's own package command, a JRE 21+ runtime stage, a numeric
 * non-root user, the shaded jar copied from the build stage, and an exec-form ENTRYPOINT running it.
 */
final class ContainerfileCheck {
  static final String BUILD_COMMAND = "mvn -B -ntp -pl cli -am package -DskipTests";
  static final String JAR = "cli/target/portage.jar";
  /** The JVM options bin/portage gives every Java version; the image's ENTRYPOINT must carry them too. */
  static final List<String> JVM_DEFAULTS =
      List.of("--enable-native-access=ALL-UNNAMED", "-XX:PerMethodTrapLimit=0", "-XX:PerBytecodeTrapLimit=0");

  private static final Pattern FROM = Pattern.compile("(\\S+)(?:\\s+AS\\s+(\\S+))?", Pattern.CASE_INSENSITIVE);
  /** Java feature version in an image tag: maven:3.9-eclipse-temurin-21, eclipse-temurin:21-jre, ...-jdk-25. */
  private static final Pattern JAVA_VERSION = Pattern.compile("(?:temurin|jdk|jre|openjdk)[-:]?(\\d{2})|:(\\d{2})[.-]");

  private ContainerfileCheck() {}

  static List<String> problems(ContainerBuildFile file, String projectVersion) {
    List<String> problems = new ArrayList<>();
    String name = file.file().getFileName().toString();
    List<ContainerBuildFile.Instruction> froms = file.all("FROM");
    if (froms.size() < 2) {
      problems.add(name + ": " + froms.size() + " FROM (expected: a build stage and a runtime stage)");
      return problems;
    }
    Matcher build = FROM.matcher(froms.get(0).rest());
    build.matches();
    String buildImage = build.group(1);
    String stage = build.group(2);
    if (!buildImage.contains("maven") || javaVersion(buildImage) < 21) {
      problems.add(name + ":" + froms.get(0).line() + ": build stage FROM " + buildImage + " (expected: a Maven image on JDK 21+)");
    }
    if (stage == null) {
      problems.add(name + ":" + froms.get(0).line() + ": build stage has no name (expected: FROM ... AS build)");
    }
    boolean builds = file.all("RUN").stream().anyMatch(r -> r.rest().contains(BUILD_COMMAND));
    if (!builds) {
      problems.add(name + ": no RUN with '" + BUILD_COMMAND + "' (expected: the project's own package command)");
    }
    List<ContainerBuildFile.Instruction> last = file.finalStage();
    ContainerBuildFile.Instruction runtimeFrom = last.get(0);
    String runtimeImage = runtimeFrom.rest().split("\\s+")[0];
    if (!runtimeImage.contains("jre") || javaVersion(runtimeImage) < 21) {
      problems.add(name + ":" + runtimeFrom.line() + ": runtime stage FROM " + runtimeImage + " (expected: a JRE 21+ image)");
    }
    String jarInImage = null;
    for (ContainerBuildFile.Instruction i : last) {
      if (i.keyword().equals("COPY") && i.rest().startsWith("--from=" + stage + " ") && i.rest().contains("/" + JAR)) {
        String[] parts = i.rest().split("\\s+");
        jarInImage = parts[parts.length - 1];
      }
    }
    if (jarInImage == null) {
      problems.add(name + ": runtime stage has no COPY --from=" + stage + " of " + JAR);
    }
    List<ContainerBuildFile.Instruction> users = last.stream().filter(i -> i.keyword().equals("USER")).toList();
    String user = users.isEmpty() ? "" : users.get(users.size() - 1).rest().split(":")[0];
    if (!user.matches("\\d+") || Integer.parseInt(user) == 0) {
      problems.add(name + ": runtime USER '" + user + "' (expected: a numeric non-zero UID, so runAsNonRoot can check it)");
    }
    List<ContainerBuildFile.Instruction> entrypoints = last.stream().filter(i -> i.keyword().equals("ENTRYPOINT")).toList();
    if (entrypoints.isEmpty()) {
      problems.add(name + ": runtime stage has no ENTRYPOINT");
    } else {
      ContainerBuildFile.Instruction ep = entrypoints.get(entrypoints.size() - 1);
      List<String> argv = execForm(ep.rest());
      if (argv == null) {
        problems.add(name + ":" + ep.line() + ": ENTRYPOINT " + ep.rest() + " (expected: exec form [\"java\", ..., \"-jar\", \"<jar>\"])");
      } else {
        int jar = argv.indexOf("-jar");
        if (!argv.get(0).equals("java") || jar < 0 || jar + 1 >= argv.size() || !argv.get(jar + 1).equals(jarInImage)) {
          problems.add(name + ":" + ep.line() + ": ENTRYPOINT " + argv + " (expected: java ... -jar " + jarInImage + ")");
        }
        for (String option : JVM_DEFAULTS) {
          if (!argv.contains(option)) {
            problems.add(name + ":" + ep.line() + ": ENTRYPOINT lacks " + option + " (bin/portage's JVM defaults: Netty's native transport on JDK 22+, no JIT traps on rare branches)");
          }
        }
      }
    }
    String image;
    try {
      image = file.imageName();
    } catch (IllegalStateException e) {
      problems.add(e.getMessage());
      return problems;
    }
    String release = projectVersion.replace("-SNAPSHOT", "");
    if (!image.endsWith(":" + release)) {
      problems.add(name + ": LABEL dev.portage.image=" + image + " (expected: tag " + release + ", the project version)");
    }
    return problems;
  }

  private static int javaVersion(String image) {
    Matcher m = JAVA_VERSION.matcher(image);
    int best = -1;
    while (m.find()) {
      best = Math.max(best, Integer.parseInt(m.group(1) != null ? m.group(1) : m.group(2)));
    }
    return best;
  }

  private static List<String> execForm(String text) {
    try {
      List<?> list = new ObjectMapper().readValue(text, List.class);
      return list.isEmpty() ? null : list.stream().map(String::valueOf).toList();
    } catch (JsonProcessingException e) {
      return null;
    }
  }
}
