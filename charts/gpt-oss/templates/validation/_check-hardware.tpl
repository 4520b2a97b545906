{{- /* Hardware rules: the MoE backend and the quantization each engine runs are ones gpt-oss runs with on gpu.type. */}}

{{/*
Hardware (the GPU record of gpt-oss.gpuRecords, for the TensorRT-LLM release that runs): every engine's MoE backend
(moe_config.backend of workers.<role>.engine, or trtllm-serve's engine or trtllmServe.moeBackend) is one that runs
gpt-oss on gpu.type with that release, and the quantization it runs (OVERRIDE_QUANT_ALGO) is one that backend runs
there. An unset backend takes the release's default; a release without a record is checked against the backends
every recorded release runs.
Usage: {{ include "gpt-oss.checkValues.hardware" . }}
*/}}
{{- define "gpt-oss.checkValues.hardware" -}}
{{- $record := index . (include "gpt-oss.object" (list "gpt-oss.gpuRecord" .)) }}
{{- $list := index . (include "gpt-oss.object" (list "gpt-oss.engineKeyList" .)) }}
{{- $release := $list.runs | default $list.release }}
{{- $known := hasKey $record.trtllm $release }}
{{- $support := get $record.trtllm (ternary $release "unlisted" $known) }}
{{- $gpuText := printf "%s (%s, SM %d)" .Values.gpu.type $record.architecture (int $record.sm) }}
{{- /* A stepping-stone runtime runs a release of its own: name the value that chose it. */}}
{{- $reader := ternary (printf "the release %s runs" $list.runsFrom) $list.reader (and (ne $list.runs "") (ne $list.runs $list.release)) }}
{{- $releaseText := ternary (printf "TensorRT-LLM %s, %s" $release $reader)
  (printf "a TensorRT-LLM release the chart has no GPU record for (%s), checked against what every recorded release runs" $reader) $known }}
{{- $engines := list }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $t := .Values.trtllmServe }}
{{- $explicit := include "gpt-oss.engineMoeBackend" $t.engine }}
{{- $family := ternary "blackwell" "hopper" (eq $record.architecture "Blackwell") }}
{{- $key := ternary "trtllmServe.engine.moe_config.backend" (printf "trtllmServe.moeBackend.%s" $family) (ne (toString $explicit) "") }}
{{- $engines = append $engines (dict "key" $key "backend" (include "gpt-oss.trtllmServe.moeBackend" .) "quantKey" "trtllmServe.overrideQuantAlgo"
  "quant" $t.overrideQuantAlgo) }}
{{- else }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $.Values.workers $row.key }}
{{- if $role.enabled }}
{{- $engines = append $engines (dict "key" (printf "workers.%s.engine.moe_config.backend" $row.key)
  "backend" (include "gpt-oss.engineMoeBackend" $role.engine) "quantKey" "workers.overrideQuantAlgo"
  "quant" $.Values.workers.overrideQuantAlgo) }}
{{- end }}
{{- end }}
{{- end }}
{{- $quantizations := list }}
{{- range $backend, $quants := $support.moeBackends }}{{ range $quants }}{{ $quantizations = append $quantizations . }}{{ end }}{{ end }}
{{- $quantizations = $quantizations | uniq | sortAlpha }}
{{- range $e := $engines }}
{{- $backend := $e.backend }}
{{- $backendText := printf "%s=%s" $e.key $backend }}
{{- if and (not $backend) $support.defaultMoeBackend }}
{{- $backend = $support.defaultMoeBackend }}
{{- $backendText = printf "%s unset (the release's default, %s)" $e.key $backend }}
{{- end }}
{{- /* Rule: the MoE backend runs gpt-oss on gpu.type with the TensorRT-LLM release that runs. */}}
{{- if and $backend (not (hasKey $support.moeBackends $backend)) }}
{{- fail (printf (print "%s is not a MoE backend that runs gpt-oss's MXFP4 weights on %s with %s (the chart's GPU record, "
  "gpt-oss.gpuRecords, from trtllm/RELEASES-FACTS.md), so the engine would refuse it or fail at load; allowed: %s")
  $backendText $gpuText $releaseText (keys $support.moeBackends | sortAlpha | join ", ")) }}
{{- end }}
{{- if $e.quant }}
{{- /* Rule: gpu.type runs the quantization (OVERRIDE_QUANT_ALGO). */}}
{{- if not (has $e.quant $quantizations) }}
{{- fail (printf (print "%s=%s does not run on %s with %s: gpt-oss's MXFP4 MoE runs there as %s only; allowed: %s %s, "
  "or empty (the checkpoint default)") $e.quantKey $e.quant $gpuText $releaseText (join ", " $quantizations) $e.quantKey
  (join ", " $quantizations)) }}
{{- end }}
{{- /* Rule: the MoE backend runs that quantization on gpu.type. */}}
{{- if $backend }}
{{- $runs := get $support.moeBackends $backend }}
{{- if not (has $e.quant $runs) }}
{{- $with := list }}
{{- range $other, $quants := $support.moeBackends }}{{ if has $e.quant $quants }}{{ $with = append $with $other }}{{ end }}{{ end }}
{{- fail (printf (print "%s=%s with %s does not run on %s with %s: that backend runs gpt-oss's MXFP4 MoE there as %s only; "
  "allowed: a moe_config.backend that runs %s (%s), or %s %s") $e.quantKey $e.quant $backendText $gpuText $releaseText
  (join ", " $runs) $e.quant (sortAlpha $with | join ", ") $e.quantKey (join " or " $runs)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
