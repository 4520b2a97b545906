{{- /* Helpers of the checks that decide nothing themselves: they compute what a rule compares. */}}

{{/*
Paths (a.b.c) where a values map differs from its defaults, leaves compared as JSON (absent = null).
Usage: {{ include "gpt-oss.changedValues" (dict "path" "" "value" $values "default" $defaults) | fromYamlArray }}
*/}}
{{- define "gpt-oss.changedValues" -}}
{{- $changed := list }}
{{- if and (kindIs "map" .value) (kindIs "map" .default) }}
{{- range $key := concat (keys .value) (keys .default) | uniq | sortAlpha }}
{{- $path := ternary $key (printf "%s.%s" $.path $key) (eq $.path "") }}
{{- $next := dict "path" $path "value" (index $.value $key) "default" (index $.default $key) }}
{{- $changed = concat $changed (include "gpt-oss.changedValues" $next | fromYamlArray) }}
{{- end }}
{{- else if ne (toJson .value) (toJson .default) }}
{{- $changed = append $changed .path }}
{{- end }}
{{- toYaml $changed }}
{{- end }}
