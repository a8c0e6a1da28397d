package dev.portage.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** Reads the build's version from the filtered {@code portage-version.properties}. */
final class VersionProvider implements CommandLine.IVersionProvider {
  @Override
  public String[] getVersion() throws IOException {
    Properties p = new Properties();
    try (InputStream in = VersionProvider.class.getResourceAsStream("/portage-version.properties")) {
      if (in != null) {
        p.load(in);
      }
    }
    return new String[] {
      "portage " + p.getProperty("version", "unknown"),
      "java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"
    };
  }
}
