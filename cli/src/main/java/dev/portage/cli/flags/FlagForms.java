package dev.portage.cli.flags;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * Makes every Portage subcommand take its upstream's flag forms, so a manifest written for the
 * upstream binary starts ours unchanged:
 * <ul>
 *   <li>a repeated scalar flag takes the last value (Helm and kustomize overrides append flags);
 *   <li>every boolean option takes an optional value in Go's spellings ({@code --f}, {@code --f=false},
 *       {@code --f=0});
 *   <li>the upstream flags a command accepts without implementing them ({@link UpstreamCompatible},
 *       and klog's for a command with {@link KlogOptions}) are parsed and each used one logs one WARN;
 *   <li>a command whose upstream parses with Go's {@code flag} package also takes {@code -name=value}.
 * </ul>
 * pflag's {@code --f=v} and {@code --f v} are picocli's own forms.
 */
public final class FlagForms {
  private static final Logger log = LoggerFactory.getLogger(FlagForms.class);

  /** Options that stand for an upstream flag without effect, with the upstream's name. */
  private final Map<OptionSpec, String> withoutEffect = new IdentityHashMap<>();

  private FlagForms() {}

  /** Installs the forms on {@code root} and every subcommand below it. */
  public static FlagForms install(CommandLine root) {
    FlagForms forms = new FlagForms();
    root.setOverwrittenOptionsAllowed(true);
    root.registerConverter(Boolean.class, new PflagBoolean());
    root.registerConverter(Boolean.TYPE, new PflagBoolean());
    forms.installOn(root);
    return forms;
  }

  private void installOn(CommandLine command) {
    CommandSpec spec = command.getCommandSpec();
    List<UpstreamFlags> declared = new ArrayList<>();
    if (spec.userObject() instanceof UpstreamCompatible compatible) {
      declared.add(compatible.upstreamFlags());
    }
    if (klogOptions(spec) != null) {
      declared.add(KlogOptions.WITHOUT_EFFECT);
    }
    boolean goSyntax = declared.stream().anyMatch(UpstreamFlags::goSyntax);
    for (OptionSpec option : List.copyOf(spec.options())) {
      boolean widenBoolean = isFlag(option);
      List<String> aliases = goSyntax ? singleDashAliases(spec, option.names()) : List.of();
      if (widenBoolean || !aliases.isEmpty()) {
        OptionSpec.Builder rebuilt = option.toBuilder();
        if (widenBoolean) {
          rebuilt.arity("0..1").fallbackValue("true");
        }
        if (!aliases.isEmpty()) {
          Set<String> names = new LinkedHashSet<>(List.of(option.names()));
          names.addAll(aliases);
          rebuilt.names(names.toArray(String[]::new));
        }
        spec.remove(option);
        spec.addOption(rebuilt.build());
      }
    }
    for (UpstreamFlags flags : declared) {
      for (Map.Entry<String, UpstreamFlags.Kind> flag : flags.flags().entrySet()) {
        addWithoutEffect(spec, flags.upstream(), flag.getKey(), flag.getValue(), goSyntax);
      }
    }
    for (CommandLine sub : command.getSubcommands().values()) {
      installOn(sub);
    }
  }

  private void addWithoutEffect(CommandSpec spec, String upstream, String name, UpstreamFlags.Kind kind,
      boolean goSyntax) {
    if (spec.optionsMap().containsKey(name)) {
      throw new IllegalStateException(spec.qualifiedName() + ": " + name
          + " is declared as an upstream flag without effect but the command implements it");
    }
    List<String> names = new ArrayList<>(List.of(name));
    if (goSyntax) {
      names.addAll(singleDashAliases(spec, new String[] {name}));
    }
    OptionSpec.Builder option = OptionSpec.builder(names.toArray(String[]::new)).hidden(true);
    if (kind == UpstreamFlags.Kind.BOOL) {
      option.type(Boolean.class).arity("0..1").fallbackValue("true").converters(new PflagBoolean());
    } else {
      option.type(String.class).arity("1");
    }
    OptionSpec built = option.build();
    spec.addOption(built);
    withoutEffect.put(built, upstream);
  }

  /** {@code -name} for each {@code --name} that no option of the command has taken yet. */
  private static List<String> singleDashAliases(CommandSpec spec, String[] names) {
    List<String> aliases = new ArrayList<>();
    for (String name : names) {
      if (name.startsWith("--") && name.length() > 3) {
        String alias = name.substring(1);
        if (!spec.optionsMap().containsKey(alias)) {
          aliases.add(alias);
        }
      }
    }
    return aliases;
  }

  /** A boolean option that takes no value in picocli's default: pflag lets it take one. */
  private static boolean isFlag(OptionSpec option) {
    return (option.type() == boolean.class || option.type() == Boolean.class)
        && option.arity().max() == 0 && !option.usageHelp() && !option.versionHelp();
  }

  /** Logs one WARN line for each upstream flag without effect the command line used. */
  public void warnWithoutEffect(ParseResult result) {
    for (OptionSpec option : usedWithoutEffect(result)) {
      log.warn("flag {} is accepted for compatibility with {} and has no effect in Portage",
          option.longestName(), withoutEffect.get(option));
    }
  }

  /** The upstream flags without effect that the command line used, each once. */
  List<OptionSpec> usedWithoutEffect(ParseResult result) {
    List<OptionSpec> used = new ArrayList<>();
    for (ParseResult r = result; r != null; r = r.subcommand()) {
      for (OptionSpec option : r.matchedOptionsSet()) {
        if (withoutEffect.containsKey(option)) {
          used.add(option);
        }
      }
    }
    return used;
  }

  /** What the klog flags of the command that runs ask of the log output. */
  public static LogSettings logSettings(ParseResult result) {
    ParseResult leaf = result;
    while (leaf.subcommand() != null) {
      leaf = leaf.subcommand();
    }
    KlogOptions klog = klogOptions(leaf.commandSpec());
    try {
      return klog == null ? LogSettings.NONE : klog.settings();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(leaf.commandSpec().commandLine(), e.getMessage(), e);
    }
  }

  private static KlogOptions klogOptions(CommandSpec spec) {
    for (CommandSpec mixin : spec.mixins().values()) {
      if (mixin.userObject() instanceof KlogOptions klog) {
        return klog;
      }
    }
    return null;
  }
}
