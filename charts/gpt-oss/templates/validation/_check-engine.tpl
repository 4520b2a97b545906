{{- /* Engine rules: each extra-engine-args YAML has keys of the TensorRT-LLM release that reads it only, none the chart derives. */}}

{{/*
Each engine YAML against the keys of the TensorRT-LLM release that reads it (gpt-oss.engineKeyList: the Dynamo
line's, or trtllm-serve's image tag): TensorRT-LLM keys only, none the chart derives; a trtllm-serve release the
chart has a list for (or trtllmServe.allowUnlistedRelease); a disaggregated pair with one KV transfer backend on both.
Usage: {{ include "gpt-oss.checkValues.engine" . }}
*/}}
{{- define "gpt-oss.checkValues.engine" -}}
{{- $list := index . (include "gpt-oss.object" (list "gpt-oss.engineKeyList" .)) }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $t := .Values.trtllmServe }}
{{- /* Rule: trtllm-serve runs a release the chart has an engine key list for, unless trtllmServe.allowUnlistedRelease. */}}
{{- if and (not $list.listed) (not $t.allowUnlistedRelease) }}
{{- $index := include "gpt-oss.trtllmKeyLists" . | fromJson }}
{{- fail (printf (print "trtllmServe.image.tag=%s %s, so the chart cannot check trtllmServe.engine against the keys "
  "it accepts (TensorRT-LLM refuses an unknown key at start); allowed: a tag of a release with a list (%s), or "
  "trtllmServe.allowUnlistedRelease=true to check it against %s (the plan then warns)") (toString $t.image.tag)
  (ternary (printf "is TensorRT-LLM %s, a release the chart has no engine key list for" $list.release)
  "names no TensorRT-LLM release" (ne $list.release "")) (join ", " $index.order) $index.shared.words) }}
{{- end }}
{{- /* The engine YAML overrides trtllm-serve's flags: keys the chart writes as flags must come from values. */}}
{{- $derived := dict "tensor_parallel_size" "gpus" "moe_expert_parallel_size" "gpus" "pipeline_parallel_size" "gpus"
  "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize" }}
{{- include "gpt-oss.checkEngineKeys" (dict "key" "trtllmServe" "engine" $t.engine "derived" $derived "list" $list
  "keys" (include (printf "gpt-oss.trtllmKeys.%s" $list.list) . | fromJson)) }}
{{- else }}
{{- $keys := include (printf "gpt-oss.trtllmKeys.%s" $list.list) . | fromJson }}
{{- $derivedKeys := dict "tensor_parallel_size" "tensorParallelSize" "pipeline_parallel_size" "pipelineParallelSize"
  "moe_expert_parallel_size" "expertParallelSize" "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize"
  "max_num_tokens" "maxNumTokens" "max_seq_len" "maxSeqLen" }}
{{- $w := .Values.workers }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
{{- include "gpt-oss.checkEngineKeys" (dict "key" $key "engine" $role.engine "derived" $derivedKeys "list" $list "keys" $keys
  "derivedNested" (dict "kv_cache_config" (dict "free_gpu_memory_fraction" "freeGpuMemoryFraction"))) }}
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
{{- $prefillBackend := get (get (default dict $w.prefill.engine) "cache_transceiver_config" | default dict) "backend" | toString }}
{{- $decodeBackend := get (get (default dict $w.decode.engine) "cache_transceiver_config" | default dict) "backend" | toString }}
{{- /* Rule: prefill and decode use one KV transfer backend (no pair of different ones is documented to talk). */}}
{{- if ne $prefillBackend $decodeBackend }}
{{- fail (printf (print "workers.prefill.engine.cache_transceiver_config.backend=%s and "
  "workers.decode.engine.cache_transceiver_config.backend=%s differ: the decode workers pull each KV cache from the prefill "
  "workers through their cache transceivers, and no pair of different backends is documented to interoperate; "
  "allowed: the same backend on both (UCX, NIXL, MPI or DEFAULT)") $prefillBackend $decodeBackend) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Engine keys of one extra-engine-args YAML against the keys of the release that reads it: TensorRT-LLM refuses
unknown keys 30 minutes into a load, and keys the chart derives from structured values must be set there.
key: the values path of the owner; keys: the release's list (gpt-oss.trtllmKeys.<release>); list: which list
and who reads the YAML (gpt-oss.engineKeyList), for the messages.
Usage: {{ include "gpt-oss.checkEngineKeys" (dict "key" "workers.worker" "engine" $engine "derived" $derived "list" $list "keys" $keys) }}
*/}}
{{- define "gpt-oss.checkEngineKeys" -}}
{{- $key := .key }}
{{- $keys := .keys }}
{{- $list := .list }}
{{- $values := default dict $keys.values }}
{{- $unions := default dict $keys.unions }}
{{- range $name, $value := .engine }}
{{- /* Rule: keys the chart derives come from the structured values. */}}
{{- if hasKey $.derived $name }}
{{- fail (printf "%s.engine.%s is set by the chart from %s.%s; set that instead" $key $name $key (get $.derived $name)) }}
{{- end }}
{{- /* Rule: engine keys of the TensorRT-LLM release that reads the YAML only. */}}
{{- if not (has $name $keys.top) }}
{{- fail (printf "%s.engine.%s is not an engine key of %s (%s%s): TensorRT-LLM would refuse the engine YAML at start; allowed: %s"
  $key $name $list.name $list.reader (include "gpt-oss.engineKeyHistory" (dict "list" $list "path" $name)) (join ", " $keys.top)) }}
{{- end }}
{{- $union := get $unions $name }}
{{- $checked := list (list $name $value) }}
{{- if and $union (kindIs "map" $value) (hasKey (default dict $value) $union.discriminator) }}
{{- $checked = append $checked (list (printf "%s.%s" $name $union.discriminator) (get $value $union.discriminator)) }}
{{- end }}
{{- range $checked }}
{{- $path := index . 0 }}
{{- $given := toString (index . 1) }}
{{- /* Rule: a key that takes only some values in the release (backend: pytorch; speculative_config's decoding_type). */}}
{{- if and (hasKey $values $path) (not (has $given (get $values $path))) }}
{{- fail (printf "%s.engine.%s=%s is not accepted by %s (%s%s); allowed: %s" $key $path $given $list.name $list.reader
  (include "gpt-oss.engineKeyHistory" (dict "list" $list "path" (printf "%s=%s" $path $given))) (join ", " (get $values $path))) }}
{{- end }}
{{- end }}
{{- $nestedFields := get $keys.nested $name }}
{{- /* Rule: a nested config is a map of its keys (or null). */}}
{{- if and $nestedFields (not (kindIs "map" $value)) (not (kindIs "invalid" $value)) }}
{{- fail (printf "%s.engine.%s=%v is not a map: TensorRT-LLM reads it as a %s config; allowed: a map of %s, or null" $key $name $value $name
  (join ", " $nestedFields)) }}
{{- end }}
{{- if and $nestedFields (kindIs "map" $value) }}
{{- $allowed := $nestedFields }}
{{- $what := $name }}
{{- if and $union (hasKey $value $union.discriminator) }}
{{- $choice := toString (get $value $union.discriminator) }}
{{- $allowed = get $union.members $choice }}
{{- $what = printf "%s with %s %s" $name $union.discriminator $choice }}
{{- end }}
{{- range $sub, $_ := $value }}
{{- /* Rule: keys of a nested config the chart derives come from the structured values. */}}
{{- $derivedHere := get (default dict $.derivedNested) $name | default dict }}
{{- if hasKey $derivedHere $sub }}
{{- fail (printf "%s.engine.%s.%s is set by the chart from %s.%s; set that instead" $key $name $sub $key (get $derivedHere $sub)) }}
{{- end }}
{{- /* Rule: keys of a nested config are that config's in the release (a speculative_config's: its decoding_type's). */}}
{{- if not (has $sub $allowed) }}
{{- fail (printf "%s.engine.%s.%s is not a key of %s in %s (%s%s); allowed: %s" $key $name $sub $what $list.name $list.reader
  (include "gpt-oss.engineKeyHistory" (dict "list" $list "path" (printf "%s.%s" $name $sub))) (join ", " $allowed)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
