package dev.transferops.helmcheck;

import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.fabric8.kubernetes.api.model.AnyType;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Validates one rendered manifest document against the Kubernetes API as modelled by the
 * fabric8 kubernetes-model ({@link #API_MODEL}), strictly:
 *
 * <ul>
 *   <li>an apiVersion/kind the API does not know fails;</li>
 *   <li>a field the API does not know, at any depth, fails (fabric8 keeps such fields in
 *       {@code additionalProperties}; any found there is reported with its path);</li>
 *   <li>a value of the wrong type fails: no coercion between strings, numbers and booleans
 *       (a quoted port or an unquoted label value is an error, as the API server would say).</li>
 * </ul>
 *
 * Then the project's own rules for every pod template (Deployments and Jobs): every container,
 * init containers included, has CPU and memory requests and limits, runs as non-root with a
 * read-only root filesystem, no privilege escalation and ALL capabilities dropped; the pod is
 * non-root; a Deployment's containers have readiness and liveness probes.
 */
final class ManifestValidator {

  static final String API_MODEL = "io.fabric8:kubernetes-model 7.4.0 (Kubernetes API v1.33)";

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization(strictMapper(), true);

  private ManifestValidator() {}

  private static ObjectMapper strictMapper() {
    JsonMapper mapper = JsonMapper.builder().disable(MapperFeature.ALLOW_COERCION_OF_SCALARS).build();
    for (CoercionInputShape shape : List.of(CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean)) {
      mapper.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
    }
    mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
    mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
    mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.String, CoercionAction.Fail);
    mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    return mapper;
  }

  /** The problems of one YAML document (empty: valid). */
  static List<String> validate(String yaml) {
    List<String> problems = new ArrayList<>();
    Object parsed;
    try {
      parsed = SERIALIZATION.unmarshal(yaml);
    } catch (RuntimeException e) {
      problems.add("does not match the Kubernetes API schema: " + rootMessage(e));
      return problems;
    }
    if (parsed instanceof GenericKubernetesResource g) {
      problems.add("unknown to the Kubernetes API: apiVersion " + g.getApiVersion() + ", kind " + g.getKind());
      return problems;
    }
    if (!(parsed instanceof HasMetadata)) {
      problems.add("not a Kubernetes object: " + (parsed == null ? "empty" : parsed.getClass().getSimpleName()));
      return problems;
    }
    unknownFields(parsed, "", problems);
    if (parsed instanceof Deployment d) {
      podRules(d.getSpec().getTemplate().getSpec(), true, problems);
    } else if (parsed instanceof Job j) {
      podRules(j.getSpec().getTemplate().getSpec(), false, problems);
    }
    return problems;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String m = t.getMessage() == null ? t.toString() : t.getMessage();
    return m.lines().findFirst().orElse(m);
  }

  /** Walks the typed object; every non-empty additionalProperties is a field the API lacks. */
  private static void unknownFields(Object o, String path, List<String> problems) {
    if (o == null || o instanceof Quantity || o instanceof AnyType || o instanceof Enum<?>) {
      return;
    }
    if (o instanceof Map<?, ?> map) {
      map.forEach((k, v) -> unknownFields(v, path + "." + k, problems));
      return;
    }
    if (o instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        unknownFields(list.get(i), path + "[" + i + "]", problems);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
          || m.getDeclaringClass() == Object.class) {
        continue;
      }
      Object value;
      try {
        value = m.invoke(o);
      } catch (ReflectiveOperationException e) {
        continue;
      }
      String field = Character.toLowerCase(m.getName().charAt(3)) + m.getName().substring(4);
      if (field.equals("additionalProperties")) {
        if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
          problems.add("unknown field(s) " + extra.keySet() + " at " + (path.isEmpty() ? "the top level" : path.substring(1)));
        }
      } else {
        unknownFields(value, path + "." + field, problems);
      }
    }
  }

  private static void podRules(PodSpec pod, boolean needsProbes, List<String> problems) {
    PodSecurityContext psc = pod.getSecurityContext();
    if (psc == null || !Boolean.TRUE.equals(psc.getRunAsNonRoot())) {
      problems.add("pod securityContext.runAsNonRoot must be true");
    }
    List<Container> all = new ArrayList<>(pod.getContainers());
    if (pod.getInitContainers() != null) {
      all.addAll(pod.getInitContainers());
    }
    for (Container c : all) {
      String where = "container " + c.getName() + ": ";
      var res = c.getResources();
      for (String kind : List.of("cpu", "memory")) {
        if (res == null || res.getLimits() == null || !res.getLimits().containsKey(kind)) {
          problems.add(where + "no " + kind + " limit");
        }
        if (res == null || res.getRequests() == null || !res.getRequests().containsKey(kind)) {
          problems.add(where + "no " + kind + " request");
        }
      }
      SecurityContext sc = c.getSecurityContext();
      if (sc == null) {
        problems.add(where + "no securityContext");
        continue;
      }
      if (!Boolean.TRUE.equals(sc.getRunAsNonRoot()) && (psc == null || !Boolean.TRUE.equals(psc.getRunAsNonRoot()))) {
        problems.add(where + "may run as root");
      }
      if (sc.getRunAsUser() != null && sc.getRunAsUser() == 0) {
        problems.add(where + "runs as uid 0");
      }
      if (!Boolean.TRUE.equals(sc.getReadOnlyRootFilesystem())) {
        problems.add(where + "root filesystem not read-only");
      }
      if (!Boolean.FALSE.equals(sc.getAllowPrivilegeEscalation())) {
        problems.add(where + "allowPrivilegeEscalation must be false");
      }
      if (Boolean.TRUE.equals(sc.getPrivileged())) {
        problems.add(where + "privileged");
      }
      if (sc.getCapabilities() == null || sc.getCapabilities().getDrop() == null || !sc.getCapabilities().getDrop().contains("ALL")) {
        problems.add(where + "capabilities must drop ALL");
      }
    }
    if (needsProbes) {
      for (Container c : pod.getContainers()) {
        if (c.getReadinessProbe() == null) {
          problems.add("container " + c.getName() + ": no readinessProbe");
        }
        if (c.getLivenessProbe() == null) {
          problems.add("container " + c.getName() + ": no livenessProbe");
        }
      }
    }
  }
}
