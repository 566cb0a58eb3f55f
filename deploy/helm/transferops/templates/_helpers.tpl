{{/*
Chart name.
*/}}
{{- define "transferops.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name (release-scoped). Truncated to leave room for a
component suffix ("-messaging" is the longest at 10 characters).
*/}}
{{- define "transferops.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart label value.
*/}}
{{- define "transferops.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels shared by everything in the release.
*/}}
{{- define "transferops.selectorLabels" -}}
app.kubernetes.io/name: {{ include "transferops.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "transferops.labels" -}}
helm.sh/chart: {{ include "transferops.chart" . }}
{{ include "transferops.selectorLabels" . }}
app.kubernetes.io/version: {{ (default .Chart.AppVersion .Values.image.tag) | toString | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: transferops
{{- end }}

{{/*
Name of a component's resources: <fullname>-<component>.
Usage: include "transferops.componentName" (dict "root" $ "name" "fleet")
*/}}
{{- define "transferops.componentName" -}}
{{- printf "%s-%s" (include "transferops.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels of one component. The tier label (gateway | service) is what
the NetworkPolicies select peers by.
Usage: include "transferops.componentSelectorLabels" (dict "root" $ "name" "fleet" "svc" $svc)
*/}}
{{- define "transferops.componentSelectorLabels" -}}
{{ include "transferops.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "transferops.componentLabels" -}}
{{ include "transferops.labels" .root }}
app.kubernetes.io/component: {{ .name }}
transferops.io/tier: {{ include "transferops.tier" .svc }}
{{- end }}

{{/*
Tier of a component: "gateway" for type http, "service" for type grpc.
*/}}
{{- define "transferops.tier" -}}
{{- if eq (toString .type) "http" }}gateway{{ else }}service{{ end }}
{{- end }}

{{/*
Effective settings of a component: componentDefaults overlaid by its own
entry in .Values.services. Returned as YAML; use with fromYaml.
Usage: $svc := include "transferops.component" (dict "root" $ "name" $name "svc" $raw) | fromYaml
*/}}
{{- define "transferops.component" -}}
{{- $own := .svc | default dict }}
{{- $merged := mergeOverwrite (deepCopy .root.Values.componentDefaults) (deepCopy $own) }}
{{- /* mergeOverwrite skips empty values (false, [], ""): a component's own
       scalars and lists always win, only maps are deep-merged. */}}
{{- range $k, $v := $own }}
{{- if not (kindIs "map" $v) }}
{{- $_ := set $merged $k $v }}
{{- end }}
{{- end }}
{{- if not (has (toString $merged.type) (list "grpc" "http")) }}
{{- fail (printf "services.%s.type must be \"grpc\" or \"http\", got %q" .name (toString $merged.type)) }}
{{- end }}
{{- if not $merged.port }}
{{- fail (printf "services.%s.port is required" .name) }}
{{- end }}
{{- $_ := set $merged "servicePort" (dig "service" "port" $merged.port $merged) }}
{{- $_ := set $merged "serviceType" (dig "service" "type" "ClusterIP" $merged) }}
{{- if not $merged.urlEnv }}
{{- $_ := set $merged "urlEnv" (printf "%s_URL" (upper .name)) }}
{{- end }}
{{- toYaml $merged }}
{{- end }}

{{/*
Image reference.
*/}}
{{- define "transferops.image" -}}
{{- $ref := printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) }}
{{- with .Values.image.digest }}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" .) }}
{{- fail (printf "image.digest must be sha256:<64 hex digits>, got %q" .) }}
{{- end }}
{{- $ref = printf "%s@%s" $ref . }}
{{- end }}
{{- $ref }}
{{- end }}

{{/*
Name of the shared ConfigMap.
*/}}
{{- define "transferops.configMapName" -}}
{{- printf "%s-config" (include "transferops.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Non-secret configuration as a map (shared by the ConfigMap and the checksum).
Includes every enabled gRPC service's address under its urlEnv.
*/}}
{{- define "transferops.configData" -}}
{{- $data := dict }}
{{- range $k, $v := .Values.config }}
{{- if ne (toString $v) "" }}
{{- $_ := set $data $k (toString $v) }}
{{- end }}
{{- end }}
{{- range $name, $raw := .Values.services }}
{{- $svc := include "transferops.component" (dict "root" $ "name" $name "svc" $raw) | fromYaml }}
{{- if and $svc.enabled (eq (toString $svc.type) "grpc") }}
{{- $_ := set $data $svc.urlEnv (printf "http://%s:%v" (include "transferops.componentName" (dict "root" $ "name" $name)) $svc.servicePort) }}
{{- end }}
{{- end }}
{{- range $k, $v := .Values.extraConfig }}
{{- $_ := set $data $k (toString $v) }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/*
secretKeyRef env entries for a list of variable names.
Usage: include "transferops.secretEnv" (dict "root" $ "names" $list "owner" "services.fleet")
*/}}
{{- define "transferops.secretEnv" -}}
{{- $root := .root }}
{{- range $envName := .names }}
{{- $ref := index $root.Values.secrets.env $envName }}
{{- if not $ref }}
{{- fail (printf "%s.secretEnv names %s, which is not in secrets.env" $.owner $envName) }}
{{- end }}
{{- $secretName := default $root.Values.secrets.existingSecret $ref.existingSecret }}
{{- if not $secretName }}
{{- fail (printf "secrets.existingSecret (or secrets.env.%s.existingSecret) must name an existing Secret" $envName) }}
{{- end }}
- name: {{ $envName }}
  valueFrom:
    secretKeyRef:
      name: {{ $secretName | quote }}
      key: {{ required (printf "secrets.env.%s.key is required" $envName) $ref.key | quote }}
{{- end }}
{{- end }}

{{/*
Pod-level settings shared by Deployments and the migrations Job.
*/}}
{{- define "transferops.podCommon" -}}
{{- if .Values.serviceAccount.name }}
serviceAccountName: {{ .Values.serviceAccount.name }}
{{- end }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/*
The writable /tmp volume.
*/}}
{{- define "transferops.tmpVolume" -}}
- name: tmp
  emptyDir:
    {{- with .Values.tmpVolume.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end }}

{{/*
The container of a component: image, argument, hardened security context,
writable /tmp. Usage: include "transferops.container" (dict "root" $ "name" "migrate-fleet" "args" (list "migrate" "fleet"))
*/}}
{{- define "transferops.containerBase" -}}
- name: {{ .name }}
  image: {{ include "transferops.image" .root | quote }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  args:
    {{- toYaml .args | nindent 4 }}
  securityContext:
    {{- toYaml .root.Values.securityContext | nindent 4 }}
  volumeMounts:
    {{- include "transferops.tmpVolumeMount" .root | nindent 4 }}
{{- end }}

{{- define "transferops.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/*
The connection budget (values `database`; docs/operations.md, "The connection budget").
Returns YAML: pools (component -> pool size), processes (component -> the most processes it
may run: maxReplicas when autoscaled, else replicas, plus one a rolling update adds), the
connections each part needs and the total. Fails when the total exceeds database.connections.
  pool of a component = its database.pool when every pool fits, else scaled down in
  proportion to what the LISTEN connections leave, never below database.minPool;
  with PgBouncer the pools connect to it: its server connections count instead.
Usage: $budget := include "transferops.dbBudget" $ | fromYaml
*/}}
{{- define "transferops.dbBudget" -}}
{{- $db := .Values.database }}
{{- range $var := list "DB_POOL_MAX" "EVIDENCE_DB_POOL_MAX" }}
{{- if or (hasKey $.Values.config $var) (hasKey $.Values.extraConfig $var) }}
{{- fail (printf "%s is set by the chart from the connection budget: set services.<name>.database.pool instead of config.%s" $var $var) }}
{{- end }}
{{- end }}
{{- $budget := int $db.connections }}
{{- $minPool := int $db.minPool }}
{{- $pgb := $db.pgbouncer.enabled }}
{{- $procs := dict }}
{{- $wants := dict }}
{{- $fixed := 0 }}
{{- $wanted := 0 }}
{{- range $name, $raw := .Values.services }}
{{- $svc := include "transferops.component" (dict "root" $ "name" $name "svc" $raw) | fromYaml }}
{{- range $env := $svc.extraEnv }}
{{- if has $env.name (list "DB_POOL_MAX" "EVIDENCE_DB_POOL_MAX") }}
{{- fail (printf "services.%s.extraEnv sets %s, which the chart sets from the connection budget: set services.%s.database.pool instead" $name $env.name $name) }}
{{- end }}
{{- end }}
{{- if and $svc.enabled (gt (int $svc.database.pool) 0) }}
{{- $n := add1 (ternary $svc.autoscaling.maxReplicas $svc.replicas $svc.autoscaling.enabled | int) }}
{{- $_ := set $procs $name $n }}
{{- $_ := set $wants $name (int $svc.database.pool) }}
{{- $fixed = add $fixed (mul $n (max 1 (int $svc.database.listen))) }}
{{- $wanted = add $wanted (mul $n (int $svc.database.pool)) }}
{{- end }}
{{- end }}
{{- $pools := dict }}
{{- $poolTotal := 0 }}
{{- if $pgb }}
{{- range $name, $want := $wants }}
{{- $_ := set $pools $name $want }}
{{- end }}
{{- $poolTotal = mul (add1 (int $db.pgbouncer.replicas)) (int $db.pgbouncer.poolSize) }}
{{- else }}
{{- $room := sub $budget $fixed }}
{{- range $name, $want := $wants }}
{{- $pool := $want }}
{{- if gt $wanted $room }}
{{- $pool = max $minPool (div (mul $want (max 0 $room)) $wanted) }}
{{- end }}
{{- $_ := set $pools $name $pool }}
{{- $poolTotal = add $poolTotal (mul (index $procs $name) $pool) }}
{{- end }}
{{- end }}
{{- $total := add $fixed $poolTotal }}
{{- if gt $total $budget }}
{{- $parts := list }}
{{- range $name, $n := $procs }}
{{- $parts = append $parts (printf "%s %d x pool %d" $name $n (index $pools $name)) }}
{{- end }}
{{- fail (printf "connection budget exceeded: the release may need %d PostgreSQL connections (%d for LISTENs and migration locks, %d for %s) but database.connections is %d. Raise database.connections (max_connections less what others need), lower services.<name>.autoscaling.maxReplicas or replicas, or enable database.pgbouncer (docs/operations.md, \"The connection budget\")" $total $fixed $poolTotal (ternary "PgBouncer's server connections" (printf "pools: %s (processes at maximum replicas plus one surge)" (join ", " $parts)) $pgb) $budget) }}
{{- end }}
{{- toYaml (dict "pools" $pools "processes" $procs "listen" $fixed "pooled" $poolTotal "total" $total) }}
{{- end }}
