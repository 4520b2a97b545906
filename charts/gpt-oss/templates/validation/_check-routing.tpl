{{- /* Routing rules: KV routing needs KV events, prefix reuse and one KV block size. */}}

{{/*
Routing: KV routing needs prefix reuse and one KV block size (a runtime that publishes KV events: checkValues.dynamoRelease).
Usage: {{ include "gpt-oss.checkValues.routing" . }}
*/}}
{{- define "gpt-oss.checkValues.routing" -}}
{{- $w := .Values.workers }}
{{- if and (eq .Values.runtime "dynamo") (eq .Values.frontend.routerMode "kv") }}
{{- /* Runtimes before 1.2.0 (no known KV-event flag) are refused by gpt-oss.checkValues.dynamoRelease. */}}
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
