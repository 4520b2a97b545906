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
app.kubernetes.io/name: {{ include "gpt-oss.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
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
