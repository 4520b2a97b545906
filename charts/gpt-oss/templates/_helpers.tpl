{{- /* Names, labels, images and security contexts shared by every template. */}}

{{/*
Chart name, truncated to the 63 characters a label allows.
Usage: {{ include "gpt-oss.name" . }}
*/}}
{{- define "gpt-oss.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every resource name: the release name, plus the chart name unless the release has it.
Usage: {{ include "gpt-oss.fullname" . }}
*/}}
{{- define "gpt-oss.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
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
{{- $dynamo := include "gpt-oss.dynamoImage" . | fromYaml }}
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
{{- $cache := include "gpt-oss.cachePlacement" . | fromYaml }}
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
