{{- /* Name rules: every name the release makes, the chart's and the Dynamo operator's, fits its Kubernetes limit. */}}

{{/*
Names: the fullname (release name, nameOverride, fullnameOverride) is a name a Service can have, and no name derived
from it (gpt-oss.limitedNames) is longer than its limit; the refusal names the longest and the longest release name
or fullnameOverride this configuration allows. Nothing is truncated instead: a cut name can collide with another
release's and hides which object overflowed.
Usage: {{ include "gpt-oss.checkValues.names" . }}
*/}}
{{- define "gpt-oss.checkValues.names" -}}
{{- $fullname := include "gpt-oss.fullname" . }}
{{- $name := include "gpt-oss.name" . }}
{{- $key := printf "the release name %s" .Release.Name }}
{{- if .Values.fullnameOverride }}
{{- $key = printf "fullnameOverride=%s" .Values.fullnameOverride }}
{{- else if .Values.nameOverride }}
{{- $key = printf "the release name %s with nameOverride=%s" .Release.Name .Values.nameOverride }}
{{- end }}
{{- /* Rule: the fullname is a DNS-1035 label: Services are named after it (the operator's <DGD>-frontend, the chart's
  <fullname>-trtllm-serve), and a Service name starts with a letter and has no dots. */}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) }}
{{- fail (printf (print "%s makes the name prefix %s, but Services are named after it (%s-frontend or %s-trtllm-serve) "
  "and a Service name is a DNS-1035 label: it starts with a letter and has no dots; allowed: a release name (or "
  "fullnameOverride) of lower-case letters, digits and '-', starting with a letter") $key $fullname $fullname $fullname) }}
{{- end }}
{{- /* Rule: every name of the release within its limit (63 for each name gpt-oss.limitedNames lists). */}}
{{- $longest := dict }}
{{- $room := 0 }}
{{- range $i, $n := include "gpt-oss.limitedNames" . | fromJsonArray }}
{{- $fits := sub (int $n.limit) (sub (int $n.length) (len $fullname)) }}
{{- if or (eq $i 0) (lt $fits $room) }}{{ $room = $fits }}{{ $longest = $n }}{{ end }}
{{- end }}
{{- if and $longest (gt (int $longest.length) (int $longest.limit)) }}
{{- $overflow := printf "%s makes %s %s (%d characters), over its limit of %d (%s)"
  $key $longest.kind $longest.name (int $longest.length) (int $longest.limit) $longest.why }}
{{- /* Only the namespace label leaves no room at all: the namespace alone (with its '-') is 63 characters or more. */}}
{{- if lt $room 1 }}
{{- fail (printf "%s; no name prefix fits beside namespace %s (%d characters); allowed: a namespace of at most 61 characters"
  $overflow .Release.Namespace (len .Release.Namespace)) }}
{{- end }}
{{- $suffixed := sub $room (add 1 (len $name)) }}
{{- $allowed := list }}
{{- if not .Values.fullnameOverride }}
{{- if gt $suffixed 0 }}
{{- $allowed = append $allowed (printf "release names up to %d characters with this configuration (up to %d if they contain %q: the chart then appends no -%s)"
  $suffixed $room $name $name) }}
{{- else if ge $room (len $name) }}
{{- $allowed = append $allowed (printf "release names up to %d characters with this configuration that contain %q (the chart appends -%s to others)"
  $room $name $name) }}
{{- end }}
{{- end }}
{{- $allowed = append $allowed (printf "fullnameOverride up to %d characters" $room) }}
{{- if hasPrefix "label nvidia.com/dynamo-namespace" $longest.kind }}
{{- $allowed = append $allowed (printf "a namespace of at most %d characters" (sub 62 (len $fullname))) }}
{{- end }}
{{- fail (printf "%s; with this configuration the name prefix %s (%d characters) may have at most %d; allowed: %s"
  $overflow $fullname (len $fullname) $room (join ", or " $allowed)) }}
{{- end }}
{{- end }}
