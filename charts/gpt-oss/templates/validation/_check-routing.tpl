{{- /* Routing rules: KV routing needs KV events, prefix reuse and one KV block size. */}}

{{/*
Routing: KV routing needs a runtime that publishes KV events, prefix reuse and one KV block size.
Usage: {{ include "gpt-oss.checkValues.routing" . }}
*/}}
{{- define "gpt-oss.checkValues.routing" -}}
{{- $w := .Values.workers }}
{{- if and (eq .Values.runtime "dynamo") (eq .Values.frontend.routerMode "kv") }}
{{- $version := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- /* No version at all is refused by the admission rules, checked before these, with the keys to set. */}}
{{- /* Rule: KV routing needs a runtime whose KV-event flag the chart knows (1.2.0 or newer). */}}
{{- if and $version (semverCompare "<1.2.0-0" $version) }}
{{- fail (printf (print "frontend.routerMode=kv needs the worker flag that publishes KV events, which this chart knows for "
  "Dynamo 1.2.x (--publish-events-and-metrics) and 1.3.0+ (--publish-kv-events), but the runtime version is %s "
  "(dynamo.runtimeVersionOverride, else dynamo.image.tag); allowed: a runtime version 1.2.0 or newer, or another "
  "frontend.routerMode") $version) }}
{{- end }}
{{- $sizes := dict }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- $role := get $w $key }}
{{- $kvConfig := get (default dict $role.engine) "kv_cache_config" | default dict }}
{{- /* Rule: KV routing needs the prefix cache (block reuse) on. */}}
{{- if and $role.enabled (eq (toString (get $kvConfig "enable_block_reuse")) "false") }}
{{- fail (printf (print "frontend.routerMode=kv sends each request to the worker that already caches its prefix, but "
  "workers.%s.engine.kv_cache_config.enable_block_reuse=false turns that cache off; set it to true (or null: the chart then "
  "turns reuse on), or another frontend.routerMode") $key) }}
{{- end }}
{{- if and $role.enabled (hasKey $kvConfig "tokens_per_block") }}
{{- $size := get $kvConfig "tokens_per_block" }}
{{- $_ := set $sizes (printf "workers.%s.engine.kv_cache_config.tokens_per_block=%v" $key $size) (int $size) }}
{{- end }}
{{- end }}
{{- /* Rule: one KV block size on every role. */}}
{{- if gt (len (values $sizes | uniq)) 1 }}
{{- fail (printf (print "frontend.routerMode=kv needs one KV block size on the frontend and every worker, but %s differ; "
  "set the same tokens_per_block on every role (or none: 32)") (join " and " (keys $sizes | sortAlpha))) }}
{{- end }}
{{- end }}
{{- end }}
