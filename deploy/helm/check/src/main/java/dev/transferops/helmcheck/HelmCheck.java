package dev.transferops.helmcheck;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Lints a Helm chart and renders it with Helm's own code (helm-java), without a helm binary.
 *
 * <pre>
 * HelmCheck [--strict] [--values FILE]... [--scenario FILE]... [--refused FILE]... [--set KEY=VALUE]... [--kube-version V] [--output FILE] CHART_DIR
 * </pre>
 *
 * --kube-version defaults to {@value #DEFAULT_KUBE_VERSION} (helm-java's own default, v1.20.0, is
 * older than the chart's kubeVersion constraint).
 *
 * Fails (non-zero exit through Maven) when:
 * <ul>
 *   <li>helm lint reports an error (or, with --strict, a warning);</li>
 *   <li>helm template fails;</li>
 *   <li>the rendered manifest has a document without apiVersion, kind or metadata.name, or the
 *       same kind/name twice;</li>
 *   <li>the chart renders a Secret (secrets are to be referenced, never created);</li>
 *   <li>a rendered object does not validate against the Kubernetes API ({@link ManifestValidator}:
 *       unknown fields, wrong types, unknown kinds) or breaks the project's rules (probes,
 *       resource limits, non-root, read-only root, no privilege escalation, capabilities dropped).</li>
 * </ul>
 * Each --scenario renders again with that values file on top (e.g. production-like values).
 * Each --refused values file must make the chart refuse to render with its connection budget
 * exceeded (its own {@code fail}): a render that succeeds, or fails otherwise, fails the check.
 * Prints every rendered kind/name and a count per kind. helm-java's template leaves out hook
 * resources, so they are rendered from a copy of the chart with the hook annotation renamed and
 * listed with ", hook".
 */
public final class HelmCheck {

  private static final Pattern DOC_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
  private static final Pattern TOP_KEY = Pattern.compile("^([A-Za-z][A-Za-z0-9]*):\\s*(.*)$");
  private static final Pattern META_NAME = Pattern.compile("^  name:\\s*(.+?)\\s*$");
  private static final Pattern SOURCE = Pattern.compile("^# Source:\\s*(.+)$");
  /** The hook annotation key, where it is followed by a YAML key separator. */
  private static final Pattern HOOK_KEY = Pattern.compile("helm\\.sh/hook(?=[\"']?\\s*:)");
  private static final String UNHOOKED_KEY = "helm-check.invalid/hook";

  static final String DEFAULT_KUBE_VERSION = "v1.33.0";

  private HelmCheck() {}

  public static void main(String[] args) throws Exception {
    boolean strict = false;
    String chartArg = null;
    // helm-java's template defaults to Kubernetes v1.20.0, below the chart's kubeVersion
    // constraint (gRPC probes); render against a current minor unless told otherwise.
    String kubeVersion = DEFAULT_KUBE_VERSION;
    Path output = null;
    List<Path> valuesFiles = new ArrayList<>();
    List<Path> scenarios = new ArrayList<>();
    List<Path> refused = new ArrayList<>();
    Map<String, String> sets = new TreeMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--strict" -> strict = true;
        case "--values", "-f" -> valuesFiles.add(Paths.get(need(args, ++i, "--values")));
        case "--scenario" -> scenarios.add(Paths.get(need(args, ++i, "--scenario")));
        case "--refused" -> refused.add(Paths.get(need(args, ++i, "--refused")));
        case "--set" -> {
          String kv = need(args, ++i, "--set");
          int eq = kv.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--set expects KEY=VALUE, got: " + kv);
          }
          sets.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        case "--kube-version" -> kubeVersion = need(args, ++i, "--kube-version");
        case "--output", "-o" -> output = Paths.get(need(args, ++i, "--output"));
        default -> {
          if (args[i].startsWith("-")) {
            throw new IllegalArgumentException("unknown option: " + args[i]);
          }
          if (chartArg != null) {
            throw new IllegalArgumentException("more than one chart given: " + chartArg + ", " + args[i]);
          }
          chartArg = args[i];
        }
      }
    }
    if (chartArg == null) {
      throw new IllegalArgumentException(
          "usage: HelmCheck [--strict] [--values FILE]... [--set K=V]... [--kube-version V] [--output FILE] CHART_DIR");
    }
    Path chart = Paths.get(chartArg).toAbsolutePath().normalize();
    if (!Files.isRegularFile(chart.resolve("Chart.yaml"))) {
      throw new IllegalArgumentException("not a chart (no Chart.yaml): " + chart);
    }

    List<String> failures = new ArrayList<>();
    Helm helm = new Helm(chart);

    // 1. helm lint
    System.out.println("helm lint " + chart + (strict ? " --strict" : ""));
    var lint = helm.lint();
    if (strict) {
      lint = lint.strict();
    }
    LintResult lintResult = lint.call();
    for (String message : lintResult.getMessages()) {
      System.out.println("  " + message);
    }
    if (lintResult.isFailed()) {
      failures.add("helm lint failed");
    } else {
      System.out.println("  lint: OK (" + lintResult.getMessages().size() + " message(s))");
    }

    // 2-4. Render with the given values, then once more per --scenario values file on top.
    renderAndCheck(chart, valuesFiles, sets, kubeVersion, failures, output, "values as given");
    for (Path scenario : scenarios) {
      List<Path> files = new ArrayList<>(valuesFiles);
      files.add(scenario);
      renderAndCheck(chart, files, sets, kubeVersion, failures, null, "scenario " + scenario);
    }
    for (Path values : refused) {
      List<Path> files = new ArrayList<>(valuesFiles);
      files.add(values);
      System.out.println("helm template transferops " + chart + " (must be refused: " + values + ")");
      List<String> refusals = new ArrayList<>();
      String manifest = render(chart, files, sets, kubeVersion, refusals);
      if (manifest != null) {
        failures.add("the chart rendered " + values + ", which it must refuse");
      } else if (refusals.stream().noneMatch(r -> r.contains("connection budget exceeded"))) {
        failures.add("the chart refused " + values + " for another reason than its connection budget: " + refusals);
      } else {
        System.out.println("  refused: " + String.join("; ", refusals).replaceAll("\\s+", " "));
      }
    }

    if (!failures.isEmpty()) {
      System.out.println();
      for (String failure : failures) {
        System.out.println("FAIL: " + failure);
      }
      System.out.flush();
      throw new IllegalStateException("Helm chart check failed: " + String.join("; ", failures));
    }
    System.out.println("OK: chart " + chart.getFileName() + " lints and renders");
  }

  private static void renderAndCheck(
      Path chart,
      List<Path> valuesFiles,
      Map<String, String> sets,
      String kubeVersion,
      List<String> failures,
      Path output,
      String label)
      throws IOException {
    // 2. helm template. helm-java returns only the release manifest, never the hooks
    //    (rel.Hooks), so the hooks are still rendered and parsed here but not shown.
    System.out.println("helm template transferops " + chart + " --kube-version " + kubeVersion + " (" + label + ")");
    String manifest = render(chart, valuesFiles, sets, kubeVersion, failures);

    // 3. The hooks: render a copy of the chart whose "helm.sh/hook" annotation key is
    //    renamed, so hook resources (the migrations Job) come out as ordinary manifests
    //    and get the same checks.
    String hooksManifest = null;
    if (manifest != null) {
      Path copy = Files.createTempDirectory("helm-check-");
      try {
        Path unhooked = copy.resolve(chart.getFileName());
        int renamed = copyUnhooked(chart, unhooked);
        if (renamed > 0) {
          String all = render(unhooked, valuesFiles, sets, kubeVersion, failures);
          if (all != null) {
            hooksManifest = onlyHooks(all);
          }
        }
      } finally {
        deleteTree(copy);
      }
    }

    if (manifest != null) {
      checkManifest(manifest, hooksManifest == null ? "" : hooksManifest, failures);
      if (output != null) {
        Files.writeString(
            output,
            manifest
                + (hooksManifest == null || hooksManifest.isBlank()
                    ? ""
                    : "---\n# Hooks (helm-java's template leaves them out; rendered separately)\n"
                        + hooksManifest.replace(UNHOOKED_KEY, "helm.sh/hook")));
        System.out.println("  manifest written to " + output.toAbsolutePath());
      }
    }

  }

  private static String render(
      Path chart, List<Path> valuesFiles, Map<String, String> sets, String kubeVersion, List<String> failures) {
    try {
      TemplateCommand template =
          new Helm(chart).template().withName("transferops").withNamespace("transferops").withKubeVersion(kubeVersion);
      for (Path values : valuesFiles) {
        template = template.withValuesFile(values.toAbsolutePath());
      }
      for (Map.Entry<String, String> set : sets.entrySet()) {
        template = template.set(set.getKey(), set.getValue());
      }
      return template.call();
    } catch (RuntimeException e) {
      failures.add("helm template failed: " + e.getMessage());
      return null;
    }
  }

  /** Copies the chart, renaming the hook annotation key; returns how many were renamed. */
  private static int copyUnhooked(Path from, Path to) throws IOException {
    int[] renamed = {0};
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path source : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          String name = source.getFileName().toString();
          if (source.getParent().getFileName().toString().equals("templates")
              && (name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".tpl"))) {
            String text = Files.readString(source);
            Matcher m = HOOK_KEY.matcher(text);
            StringBuilder out = new StringBuilder();
            while (m.find()) {
              renamed[0]++;
              m.appendReplacement(out, Matcher.quoteReplacement(UNHOOKED_KEY));
            }
            m.appendTail(out);
            Files.writeString(target, out.toString());
          } else {
            Files.copy(source, target);
          }
        }
      }
    }
    return renamed[0];
  }

  /** The documents of a manifest that carry the renamed hook annotation. */
  private static String onlyHooks(String manifest) {
    StringBuilder hooks = new StringBuilder();
    for (String doc : DOC_SEPARATOR.split(manifest)) {
      if (doc.contains(UNHOOKED_KEY)) {
        hooks.append("---\n").append(doc.strip()).append('\n');
      }
    }
    return hooks.toString();
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static void checkManifest(String manifest, String hooks, List<String> failures) {
    Map<String, Integer> perKind = new TreeMap<>();
    Set<String> seen = new HashSet<>();
    int documents = 0;
    int hookDocuments = 0;
    List<String> docs = new ArrayList<>(List.of(DOC_SEPARATOR.split(manifest)));
    docs.addAll(List.of(DOC_SEPARATOR.split(hooks)));
    for (String doc : docs) {
      boolean isHook = doc.contains(UNHOOKED_KEY);
      String source = null;
      String apiVersion = null;
      String kind = null;
      String name = null;
      boolean inMetadata = false;
      boolean hasContent = false;
      for (String line : doc.split("\\R")) {
        Matcher src = SOURCE.matcher(line);
        if (src.matches()) {
          source = src.group(1);
          continue;
        }
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        hasContent = true;
        Matcher top = TOP_KEY.matcher(line);
        if (top.matches()) {
          inMetadata = top.group(1).equals("metadata");
          switch (top.group(1)) {
            case "apiVersion" -> apiVersion = unquote(top.group(2));
            case "kind" -> kind = unquote(top.group(2));
            default -> { }
          }
          continue;
        }
        Matcher meta = META_NAME.matcher(line);
        if (inMetadata && name == null && meta.matches()) {
          name = unquote(meta.group(1));
        }
      }
      if (!hasContent) {
        continue;
      }
      documents++;
      if (isHook) {
        hookDocuments++;
      }
      String where = (source == null ? "document " + documents : source) + (isHook ? ", hook" : "");
      if (apiVersion == null || apiVersion.isEmpty()) {
        failures.add(where + ": no apiVersion");
      }
      if (kind == null || kind.isEmpty()) {
        failures.add(where + ": no kind");
        continue;
      }
      if (name == null || name.isEmpty()) {
        failures.add(where + ": " + kind + " has no metadata.name");
        continue;
      }
      if (!seen.add(kind + "/" + name)) {
        failures.add(where + ": duplicate " + kind + "/" + name);
      }
      if (kind.equals("Secret")) {
        failures.add(where + ": renders Secret/" + name + " (secrets must be referenced via existingSecret, not created)");
      }
      for (String problem : ManifestValidator.validate(doc)) {
        failures.add(where + ": " + kind + "/" + name + ": " + problem);
      }
      perKind.merge(kind, 1, Integer::sum);
      System.out.println("  " + kind + "/" + name + "  (" + where + ")");
    }
    if (documents == 0) {
      failures.add("helm template rendered no manifests");
      return;
    }
    StringBuilder summary =
        new StringBuilder("  rendered ").append(documents).append(" manifest(s), ").append(hookDocuments).append(" of them hook(s):");
    perKind.forEach((kind, count) -> summary.append(' ').append(kind).append('=').append(count));
    System.out.println(summary);
  }

  private static String unquote(String value) {
    String v = value.trim();
    if (v.length() >= 2
        && ((v.startsWith("\"") && v.endsWith("\"")) || (v.startsWith("'") && v.endsWith("'")))) {
      return v.substring(1, v.length() - 1);
    }
    return v;
  }

  private static String need(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }
}
