{{- /* Engine rules: each extra-engine-args YAML has TensorRT-LLM keys only, none the chart derives. */}}

{{/*
Engine YAML of each worker role (runtime dynamo): TensorRT-LLM keys only, none the chart derives; a
disaggregated pair with its KV transfer backend.
Usage: {{ include "gpt-oss.checkValues.engine" . }}
*/}}
{{- define "gpt-oss.checkValues.engine" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $fields := include "gpt-oss.trtllmFields" . | fromYaml }}
{{- $derivedKeys := dict "tensor_parallel_size" "tensorParallelSize" "pipeline_parallel_size" "pipelineParallelSize"
  "moe_expert_parallel_size" "expertParallelSize" "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize"
  "max_num_tokens" "maxNumTokens" "max_seq_len" "maxSeqLen" }}
{{- $w := .Values.workers }}
{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
{{- include "gpt-oss.checkEngineKeys" (dict "key" $key "engine" $role.engine "derived" $derivedKeys "fields" $fields) }}
{{- end }}
{{- end }}
{{- /* A disaggregated pair moves the KV cache between engines: both need the transfer backend. */}}
{{- if $w.prefill.enabled }}
{{- range $roleKey := list "prefill" "decode" }}
{{- $transceiver := get (default dict (get $w $roleKey).engine) "cache_transceiver_config" | default dict }}
{{- /* Rule: prefill and decode each name a KV transfer backend. */}}
{{- if not (get $transceiver "backend") }}
{{- fail (printf (print "workers.%s.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache "
  "through it; allowed: UCX, NIXL, MPI or DEFAULT") $roleKey) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Engine keys of one extra-engine-args YAML: TensorRT-LLM refuses unknown keys 30 minutes into a load,
and keys the chart derives from structured values must be set there. key: the values path of the owner.
Usage: {{ include "gpt-oss.checkEngineKeys" (dict "key" "workers.worker" "engine" $engine "derived" $derivedKeys "fields" $fields) }}
*/}}
{{- define "gpt-oss.checkEngineKeys" -}}
{{- $key := .key }}
{{- $fields := .fields }}
{{- range $name, $value := .engine }}
{{- /* Rule: keys the chart derives come from the structured values. */}}
{{- if hasKey $.derived $name }}
{{- fail (printf "%s.engine.%s is set by the chart from %s.%s; set that instead" $key $name $key (get $.derived $name)) }}
{{- end }}
{{- /* Rule: TensorRT-LLM engine keys only. */}}
{{- if not (has $name $fields.top) }}
{{- fail (printf (print "%s.engine.%s is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM %s, the release that runs), so "
  "the worker would fail at start; allowed: %s") $key $name $fields.release (join ", " $fields.top)) }}
{{- end }}
{{- $nestedFields := get $fields.nested $name }}
{{- /* Rule: a nested config is a map of its keys (or null). */}}
{{- if and $nestedFields (not (kindIs "map" $value)) (not (kindIs "invalid" $value)) }}
{{- fail (printf "%s.engine.%s=%v is not a map: TensorRT-LLM reads it as a %s config; allowed: a map of %s, or null" $key $name $value $name
  (join ", " $nestedFields)) }}
{{- end }}
{{- if and $nestedFields (kindIs "map" $value) }}
{{- range $sub, $_ := $value }}
{{- /* Rule: keys of a nested config are that config's. */}}
{{- if not (has $sub $nestedFields) }}
{{- fail (printf "%s.engine.%s.%s is not a key of %s; allowed: %s" $key $name $sub $name (join ", " $nestedFields)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
