package dev.portage.cli.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Words about how the project's work was organised (who ran what, in which sitting, on which branch),
 * which user docs must not contain: they say what the software does and what was measured. Each
 * pattern is narrow enough to leave the technical uses alone ("TLS session resumption", "leader
 * election", "sessionAffinity", "a helper method", "runs 8 workers").
 */
final class ProcessWords {
  private static final int CI = Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE;

  /** One pattern and what it catches, for the failure message. */
  record Rule(String what, Pattern pattern) {}

  static final List<Rule> RULES = List.of(
      new Rule("a person leading the work", Pattern.compile(
          "\\b(?:the|our|a)\\s+lead\\b(?!\\s+(?:to|time|in|on|of)\\b)|\\blead's\\b", CI)),
      new Rule("a helper meaning a person", Pattern.compile(
          "(?<!test )\\bhelper(?:s|'s|s')?(?![\\w(])"
              + "(?!\\s+(?:method|class|function|type|thread|script|program|tool|binary|command|library|object|record|handler)s?\\b)",
          CI)),
      new Rule("a numbered or named working session", Pattern.compile(
          "\\bsessions?\\s+\\d+\\b|\\b(?:this|that|previous|next|earlier|last|same)\\s+session\\b(?!\\s+(?:ticket|key|id|cache|resumption))",
          CI)),
      new Rule("a numbered stop", Pattern.compile("\\bstop\\s+\\d+\\b", CI)),
      new Rule("a numbered benchmark run", Pattern.compile(
          "\\bruns?\\s+\\d+[a-f]?\\b(?![.,]\\d)(?!\\s*(?:s|ms)\\b)(?!(?:\\s*[-–]\\s*\\d+)?(?:\\s+[\\w-]+)?\\s+(?:times|seconds|minutes"
              + "|instances|workers|threads|streams|connections|processes|rounds|requests|dials|tunnels|agents|servers"
              + "|replicas|nodes|pods|tests)\\b)",
          CI)),
      new Rule("a quiet run", Pattern.compile("\\bquiet[- ]runs?\\b|\\bquiet-machine run\\b|\\bquiet re-run\\b", CI)),
      new Rule("a working branch", Pattern.compile(
          "\\bs\\d{1,2}-[a-z][a-z0-9]*(?:-[a-z0-9]+)*\\b|\\bthis branch\\b|\\bmerged main\\b|\\bbranch point\\b", CI)),
      new Rule("the brief of a task", Pattern.compile(
          "\\b(?:the|this|my)\\s+brief\\b(?!\\s+(?:pause|moment|window|outage|spike|stall|burst|delay|gap|drop))", CI)),
      new Rule("working notes", Pattern.compile("\\bdocs/notes\\b", CI)),
      new Rule("first person of a diary", Pattern.compile(
          "\\bI\\s+(?:did|didn't|tried|measured|found|ran|left|think|thought|could|couldn't|have|had|was|am|will|would|changed|kept)\\b")));

  private ProcessWords() {}

  /** One hit: the line (1-based), what was matched and which rule caught it. */
  record Hit(int line, String text, String what) {
    @Override
    public String toString() {
      return "line " + line + ": \"" + text + "\" (" + what + ")";
    }
  }

  /** Every hit in {@code lines}. */
  static List<Hit> find(List<String> lines) {
    List<Hit> hits = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      for (Rule rule : RULES) {
        Matcher m = rule.pattern().matcher(lines.get(i));
        while (m.find()) {
          hits.add(new Hit(i + 1, m.group(), rule.what()));
        }
      }
    }
    return hits;
  }

  /** Hits in one piece of text (for the tests of the patterns themselves). */
  static List<Hit> find(String text) {
    return find(List.of(text.split("\n", -1)));
  }
}
