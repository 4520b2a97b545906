{{- /* What the Dynamo operator's admission webhooks read: the runtime version and the topology constraint. */}}

{{/*
The Dynamo runtime version as the operator resolves it: imageTag is the tag of the rendered image (gpt-oss.dynamoImage)
(digest cut off), imageVersion its MAJOR.MINOR.PATCH when the operator's image-tag pattern
(runtimeversion.ParseImageVersion) accepts it, else ""; version is dynamo.runtimeVersionOverride, else
imageVersion; source names the value it came from.
Usage: {{ $runtime := index . (include "gpt-oss.object" (list "gpt-oss.dynamoRuntimeVersion" .)) }}
*/}}
{{- define "gpt-oss.dynamoRuntimeVersion" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeDynamoRuntimeVersion" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.dynamoRuntimeVersion, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeDynamoRuntimeVersion" . }} (templates read it through gpt-oss.dynamoRuntimeVersion)
*/}}
{{- define "gpt-oss.computeDynamoRuntimeVersion" -}}
{{- $ref := regexReplaceAll "@.*$" (include "gpt-oss.image" (index . (include "gpt-oss.object" (list "gpt-oss.dynamoImage" .))) | trim) "" }}
{{- $tag := "" }}
{{- if regexMatch ":[^:/]*$" $ref }}
{{- $tag = regexFind "[^:]*$" $ref | trim }}
{{- end }}
{{- $imageVersion := "" }}
{{- if regexMatch (print `^[vV]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)`
  `(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?`
  `(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$`) $tag }}
{{- $imageVersion = regexFind `^[vV]?[0-9]+\.[0-9]+\.[0-9]+` $tag | trimPrefix "v" | trimPrefix "V" }}
{{- end }}
{{- $override := toString .Values.dynamo.runtimeVersionOverride }}
imageTag: {{ $tag | quote }}
imageVersion: {{ $imageVersion | quote }}
version: {{ default $imageVersion $override | quote }}
source: {{ ternary "dynamo.runtimeVersionOverride" "dynamo.image.tag" (ne $override "") }}
{{- end }}

{{/*
The DGD's deployment-level spec.topologyConstraint, {} when none is set.
Usage: {{ $constraint := include "gpt-oss.dgdTopologyConstraint" . | fromYaml }}
*/}}
{{- define "gpt-oss.dgdTopologyConstraint" -}}
{{- $c := .Values.dynamo.topologyConstraint }}
{{- $constraint := dict }}
{{- if $c.clusterTopologyName }}
{{- $_ := set $constraint "clusterTopologyName" $c.clusterTopologyName }}
{{- with $c.packDomain }}
{{- $_ := set $constraint "packDomain" . }}
{{- end }}
{{- end }}
{{- toYaml $constraint }}
{{- end }}
