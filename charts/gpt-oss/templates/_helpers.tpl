{{- /* Names, labels, images and security contexts shared by every template. */}}

{{/*
Chart name, or nameOverride (the schema keeps it a DNS-1123 label of at most 63 characters, as a label value must be).
Usage: {{ include "gpt-oss.name" . }}
*/}}
{{- define "gpt-oss.name" -}}
{{- default .Chart.Name .Values.nameOverride }}
{{- end }}

{{/*
Prefix of every resource name: the release name, plus the chart name unless the release has it. Never truncated (a
cut name can collide with another release's, and hides which names overflow): gpt-oss.checkValues.names refuses a
prefix that makes a name longer than its limit (gpt-oss.limitedNames).
Usage: {{ include "gpt-oss.fullname" . }}
*/}}
{{- define "gpt-oss.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride }}
{{- else }}
{{- $name := include "gpt-oss.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A scalar where Kubernetes wants a string (an env value, a KEDA threshold), as the user wrote it: --set types 1 and
true, and a values file's numbers reach the template as floats, which toString would write as 8.388608e+06.
Usage: {{ include "gpt-oss.scalarString" 8388608 }} (8388608; 0.7 stays 0.7, true is true)
*/}}
{{- define "gpt-oss.scalarString" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) (lt . 1e15) (gt . -1e15) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/*
A map of strings (labels, annotations, a node selector), each value --set typed (pool=true, tier=1) written as the
string Kubernetes wants, so the API server takes it.
Usage: {{ include "gpt-oss.stringMap" .Values.ingress.annotations | nindent 4 }}
*/}}
{{- define "gpt-oss.stringMap" -}}
{{- $strings := dict }}
{{- range $key, $value := . }}
{{- $_ := set $strings $key (include "gpt-oss.scalarString" $value) }}
{{- end }}
{{- toYaml $strings }}
{{- end }}

{{/*
The names with a 63-character limit that the chart and the Dynamo operator derive from the fullname in this
configuration, one {kind, name, length, limit, why} each (names of 253-character kinds, ConfigMaps, PVCs,
NetworkPolicies, RBAC, PodDisruptionBudgets, CRs, exceed the fullname by at most 30 characters and never bind). Each name is the fullname
plus a fixed text, so gpt-oss.checkValues.names gets the longest fullname this configuration allows from the widest
gap. 63: a Service name and a label value are DNS-1123 labels; a Job's name is its pods' job-name label; a Pod's name
its hostname; a KEDA ScaledObject's name a label of the HPA KEDA makes.
Usage: {{ $names := include "gpt-oss.limitedNames" . | fromJsonArray }}
*/}}
{{- define "gpt-oss.limitedNames" -}}
{{- $fullname := include "gpt-oss.fullname" . }}
{{- $names := list }}
{{- $job := "Kubernetes copies it into its pods' job-name label" }}
{{- $serviceWhy := "a DNS-1123 label" }}
{{- $operatorService := "a DNS-1123 label; the operator names each component's <DGD>-<lower-case component>, a worker's with -<8-hex worker hash>" }}
{{- if (index . (include "gpt-oss.object" (list "gpt-oss.modelSource" .))).job }}
{{- $names = append $names (dict "kind" "Job" "name" (include "gpt-oss.downloadJobName" .) "why" $job) }}
{{- end }}
{{- if .Values.benchmark.enabled }}
{{- $names = append $names (dict "kind" "Job" "name" (printf "%s-benchmark" $fullname) "why" $job) }}
{{- end }}
{{- if .Values.smokeTest.enabled }}
{{- $names = append $names (dict "kind" "Pod" "name" (printf "%s-smoke-test" $fullname) "why" "its hostname") }}
{{- end }}
{{- range $s := include "gpt-oss.autoscalers" . | fromJsonArray }}
{{- if eq $s.kind "ScaledObject" }}
{{- $names = append $names (dict "kind" "ScaledObject" "name" $s.name "why"
  (print "KEDA labels its HPA app.kubernetes.io/part-of=<its name> and selects metrics by scaledobject.keda.sh/name=<its "
  "name>: kedacore/keda controllers/keda/hpa.go")) }}
{{- end }}
{{- end }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $names = append $names (dict "kind" "Service" "name" (include "gpt-oss.trtllmServe.name" .) "why" $serviceWhy) }}
{{- if .Values.inferencePool.enabled }}
{{- $names = append $names (dict "kind" "Service" "name" (include "gpt-oss.endpointPicker.name" .) "why" $serviceWhy) }}
{{- end }}
{{- else }}
{{- /* The DGD's name is the nvidia.com/dynamo-graph-deployment-name label of its pods (and of the chart's PDB selectors). */}}
{{- $names = append $names (dict "kind" "DynamoGraphDeployment" "name" $fullname
  "why" "the operator labels its pods nvidia.com/dynamo-graph-deployment-name=<its name>") }}
{{- /* The operator's names (Dynamo operator 1.5.0-dev, ai-dynamo/dynamo@2a6da14c, deploy/operator/): every pod is
  labelled nvidia.com/dynamo-namespace=<namespace>-<DGD name, dots made dashes> (internal/dynamo/graph.go:2891,
  api/v1beta1/dynamocomponentdeployment_types.go:403). Each component gets a DCD, a Deployment and (Kubernetes
  discovery, the platform's default) a Service named <DGD>-<lower-case component> (internal/dynamo/graph.go:745,
  internal/controller/dynamocomponentdeployment_renderer.go:314), a worker's with -<8 hex worker hash> appended
  (internal/dynamo/hash.go:86, graph.go:429). On Grove the Services carry no hash
  (internal/controller/dgd_grove_stable_resources_reconciler.go:141) and the operator shortens the PodCliqueSet name
  itself (graph.go:1398). The label nvidia.com/selector=<DGD>-<lower-case component> (graph.go:2879) is never longer
  than the Service. */}}
{{- $names = append $names (dict "kind" "label nvidia.com/dynamo-namespace" "name" (include "gpt-oss.dynamoNamespace" .)
  "why" "the operator labels every pod of the DGD with <namespace>-<DGD name>, and a label value is at most 63 characters") }}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $components := list "Frontend" }}
{{- range $plan.roles }}{{ $components = append $components .component }}{{ end }}
{{- if .Values.planner.enabled }}{{ $components = append $components "Planner" }}{{ end }}
{{- range $component := $components }}
{{- $service := printf "%s-%s" $fullname (lower $component) }}
{{- if or $.Values.dynamo.grove (has $component (list "Frontend" "Planner")) }}
{{- $names = append $names (dict "kind" "the operator's Service" "name" $service "why" $operatorService) }}
{{- else }}
{{- $names = append $names (dict "kind" "the operator's Service" "name" (printf "%s-<worker hash>" $service)
  "length" (add (len $service) 9) "why" $operatorService) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $names }}
{{- $_ := set . "limit" 63 }}
{{- if not (hasKey . "length") }}{{ $_ = set . "length" (len .name) }}{{ end }}
{{- end }}
{{- toJson $names }}
{{- end }}

{{/*
Standard labels of every object; pass a dict with the root context and a component name.
Usage: {{ include "gpt-oss.labels" (dict "root" $ "component" "benchmark") }}
*/}}
{{- define "gpt-oss.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpt-oss.selectorLabels" .root }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: gpt-oss
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/*
Selector labels: name and instance only, so they never change on upgrade.
Usage: {{ include "gpt-oss.selectorLabels" . }}
*/}}
{{- define "gpt-oss.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpt-oss.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{/*
Image reference repository:tag; a tag starting with sha256: is written as a digest.
Usage: {{ include "gpt-oss.image" .Values.dynamo.image }}
*/}}
{{- define "gpt-oss.image" -}}
{{- if hasPrefix "sha256:" (toString .tag) }}
{{- printf "%s@%s" .repository .tag }}
{{- else }}
{{- printf "%s:%s" .repository (toString .tag) }}
{{- end }}
{{- end }}

{{/*
Pod-level security context of every pod the chart defines.
Usage: {{ include "gpt-oss.podSecurityContext" . | nindent 6 }}
*/}}
{{- define "gpt-oss.podSecurityContext" -}}
securityContext: {{ toYaml .Values.securityContext.pod | nindent 2 }}
{{- end }}

{{/*
Name of the ConfigMap with the scripts (files/) the Jobs, the test hooks, the check-model init containers and the
readiness probes run.
Usage: {{ include "gpt-oss.scriptsConfigMap" . }}
*/}}
{{- define "gpt-oss.scriptsConfigMap" -}}
{{- printf "%s-scripts" (include "gpt-oss.fullname" .) }}
{{- end }}

{{/*
The scripts ConfigMap as a pod volume named scripts (containers mount it read-only at /opt/gpt-oss/scripts).
Usage: {{ include "gpt-oss.scriptsVolume" . | nindent 8 }}
*/}}
{{- define "gpt-oss.scriptsVolume" -}}
- name: scripts
  configMap:
    name: {{ include "gpt-oss.scriptsConfigMap" . }}
{{- end }}


{{/*
Container security context of the chart's own utility containers (download, check-model, smoke test, benchmark):
the shared container settings plus a read-only root filesystem, their writes going to mounted volumes.
Usage: securityContext: {{ include "gpt-oss.readOnlyContainerSecurityContext" . | nindent 12 }}
*/}}
{{- define "gpt-oss.readOnlyContainerSecurityContext" -}}
{{- toYaml (merge (dict "readOnlyRootFilesystem" true) (deepCopy .Values.securityContext.container)) }}
{{- end }}

{{/*
A helper's text, computed once per render: the first call keeps it on the root context, which Helm shares
between the templates of one render, and later calls read it back. Only for helpers that read nothing but the
root (no template sets .Values, and none builds a root of its own), so every call would give the same text.
Usage: {{ include "gpt-oss.memo" (list "gpt-oss.computeX" .) }}
*/}}
{{- define "gpt-oss.memo" -}}
{{- $helper := index . 0 }}
{{- $root := index . 1 }}
{{- $key := printf "gptOssMemo/%s" $helper }}
{{- if not (hasKey $root $key) }}
{{- $_ := set $root $key (include $helper $root) }}
{{- end }}
{{- get $root $key }}
{{- end }}

{{/*
A memoized helper's text as an object, parsed once per render: the first call keeps it on the root context beside
gpt-oss.memo's text; every call gives the key it is kept under, for index. A helper that builds its object with dict
and set writes it with toJson (its text starts with "{"), which Helm parses several times faster than YAML; one
written by hand stays YAML. A template must not change what it reads this way (every later reader would see the
change): a template that edits it takes a deepCopy first.
Usage: {{ $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
*/}}
{{- define "gpt-oss.object" -}}
{{- $helper := index . 0 }}
{{- $root := index . 1 }}
{{- $key := printf "gptOssObject/%s" $helper }}
{{- if not (hasKey $root $key) }}
{{- $text := include $helper $root }}
{{- if hasPrefix "{" $text }}
{{- $_ := set $root $key (fromJson $text) }}
{{- else }}
{{- $_ := set $root $key (fromYaml $text) }}
{{- end }}
{{- end }}
{{- $key }}
{{- end }}

{{/*
TCP port of a URL: the one it names, else 443 over https and 80 over http.
Usage: {{ include "gpt-oss.urlPort" "https://hf-mirror.example.com:8443/" }}
*/}}
{{- define "gpt-oss.urlPort" -}}
{{- $url := urlParse . }}
{{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" }}
{{- default (ternary "80" "443" (eq $url.scheme "http")) $port }}
{{- end }}

{{/*
What securityContext (the pod and container settings every pod of the chart gets) grants beyond the restricted Pod
Security profile, one "key=value" each: a privileged container, root (runAsUser 0, runAsNonRoot not true), privilege
escalation (allowPrivilegeEscalation not false), capabilities kept or added (capabilities.add, a drop without ALL),
no seccomp (Unconfined). Empty for the defaults. gpt-oss.checkValues.security refuses them unless
security.allowPrivileged; then gpt-oss.safetyWarnings names them.
Usage: {{ $grants := include "gpt-oss.privilegeGrants" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.privilegeGrants" -}}
{{- $pod := .Values.securityContext.pod | default dict }}
{{- $container := .Values.securityContext.container | default dict }}
{{- $capabilities := get $container "capabilities" | default dict }}
{{- $grants := list }}
{{- if and (ne (toString (get $pod "runAsNonRoot")) "true") (ne (toString (get $container "runAsNonRoot")) "true") }}
{{- $grants = append $grants (printf "securityContext.pod.runAsNonRoot=%s" (ternary (toJson (get $pod "runAsNonRoot")) "unset" (hasKey $pod "runAsNonRoot"))) }}
{{- end }}
{{- if eq (toString (get $container "runAsNonRoot")) "false" }}
{{- $grants = append $grants "securityContext.container.runAsNonRoot=false" }}
{{- end }}
{{- range $level, $context := dict "pod" $pod "container" $container }}
{{- if and (hasKey $context "runAsUser") (eq (toString (get $context "runAsUser")) "0") }}
{{- $grants = append $grants (printf "securityContext.%s.runAsUser=0" $level) }}
{{- end }}
{{- if eq (toString (dig "seccompProfile" "type" "" $context)) "Unconfined" }}
{{- $grants = append $grants (printf "securityContext.%s.seccompProfile.type=Unconfined" $level) }}
{{- end }}
{{- end }}
{{- if eq (toString (get $container "privileged")) "true" }}
{{- $grants = append $grants "securityContext.container.privileged=true" }}
{{- end }}
{{- if ne (toString (get $container "allowPrivilegeEscalation")) "false" }}
{{- $grants = append $grants (printf "securityContext.container.allowPrivilegeEscalation=%s"
  (ternary (toJson (get $container "allowPrivilegeEscalation")) "unset" (hasKey $container "allowPrivilegeEscalation"))) }}
{{- end }}
{{- with get $capabilities "add" }}
{{- $grants = append $grants (printf "securityContext.container.capabilities.add=%s" (toJson .)) }}
{{- end }}
{{- if not (has "ALL" (get $capabilities "drop" | default list)) }}
{{- $grants = append $grants (printf "securityContext.container.capabilities.drop=%s (without ALL)" (toJson (get $capabilities "drop" | default list))) }}
{{- end }}
{{- toYaml $grants }}
{{- end }}

{{/*
Every image the release runs, with the value that sets it: key (the values key) and image (the reference as the
pods carry it), in the order of the values. security.requireImageDigests checks them; tests/chart/test_security.py
compares them with the images of the rendered pods.
Usage: {{ range include "gpt-oss.images" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.images" -}}
{{- $dynamo := index . (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .)) }}
{{- $images := list }}
{{- if eq .Values.runtime "dynamo" }}
{{- $images = append $images (dict "key" "dynamo.image" "image" (include "gpt-oss.image" $dynamo)) }}
{{- if .Values.planner.enabled }}
{{- $images = append $images (dict "key" "planner.image" "image" (include "gpt-oss.planner.image" .)) }}
{{- end }}
{{- else }}
{{- $images = append $images (dict "key" "trtllmServe.image" "image" (include "gpt-oss.image" .Values.trtllmServe.image)) }}
{{- if .Values.inferencePool.enabled }}
{{- $images = append $images (dict "key" "inferencePool.endpointPicker.image" "image"
  (include "gpt-oss.image" .Values.inferencePool.endpointPicker.image)) }}
{{- end }}
{{- end }}
{{- /* The download Job and every serving pod's check-model init container run it. */}}
{{- $images = append $images (dict "key" "modelCache.download.image" "image" (include "gpt-oss.image" .Values.modelCache.download.image)) }}
{{- if .Values.smokeTest.enabled }}
{{- $images = append $images (dict "key" "smokeTest.image" "image" (include "gpt-oss.image" .Values.smokeTest.image)) }}
{{- end }}
{{- if .Values.benchmark.enabled }}
{{- $images = append $images (ternary (dict "key" "benchmark.image" "image" (include "gpt-oss.image" .Values.benchmark.image))
  (dict "key" "dynamo.image" "image" (include "gpt-oss.image" $dynamo)) (ne .Values.benchmark.image.repository "")) }}
{{- end }}
{{- toYaml $images }}
{{- end }}

{{/*
Warnings about what the values let through that would otherwise be refused, or that hold only while the user keeps
them true: the privileges security.allowPrivileged renders, and a ReadWriteOnce model cache whose pods must all run
on one node. Appended to the plan's warnings (gpt-oss.warnings), which NOTES and tools/plan.py print.
Usage: {{ $warnings = concat $warnings (include "gpt-oss.safetyWarnings" . | fromYamlArray) }}
*/}}
{{- define "gpt-oss.safetyWarnings" -}}
{{- $warnings := list }}
{{- $grants := include "gpt-oss.privilegeGrants" . | fromYamlArray }}
{{- if and .Values.security.allowPrivileged $grants }}
{{- $warnings = append $warnings (printf (print "security.allowPrivileged=true: every pod the chart defines runs with more than "
  "the restricted Pod Security profile allows (%s); a namespace that enforces it refuses them, and a compromised container "
  "reaches the node") (join ", " $grants)) }}
{{- end }}
{{- $cache := index . (include "gpt-oss.object" (list "gpt-oss.cachePlacement" .)) }}
{{- if and $cache.singleNode (not $cache.spans) }}
{{- $warnings = append $warnings (printf (print "modelCache.accessMode=%s: one node mounts the cache at a time, so every pod that "
  "mounts it (%s) must run on the node that mounted it first; %s keeps the serving pods together, but a download Job, "
  "frontend or benchmark placed on another node waits in ContainerCreating (Multi-Attach error)")
  .Values.modelCache.accessMode (join ", " $cache.pods) $cache.pinnedBy) }}
{{- end }}
{{- toYaml $warnings }}
{{- end }}

{{/*
Text for a terminal (NOTES.txt): every control character but tab and line feed (C0, DEL, C1) written as an escape
(\x1b, \u009b), so no value can hide or rewrite what NOTES shows (ESC [30;40m over a WARNING). The schema refuses
them in every value; this is the second guard.
Usage: {{ include "gpt-oss.escapeControls" $text }}
*/}}
{{- define "gpt-oss.escapeControls" -}}
{{- $text := toString . }}
{{- if regexMatch `[\x00-\x08\x0b-\x1f\x7f-\x{9f}]` $text }}
{{- range $code := until 160 }}
{{- if and (or (lt $code 32) (ge $code 127)) (ne $code 9) (ne $code 10) }}
{{- $text = replace (printf "%c" $code) (printf (ternary `\x%02x` `\u%04x` (lt $code 128)) $code) $text }}
{{- end }}
{{- end }}
{{- end }}
{{- $text }}
{{- end }}
