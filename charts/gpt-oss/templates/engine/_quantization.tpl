{{- /* The MXFP4 quantization TensorRT-LLM runs per worker role, and why. */}}

{{/*
The quantization each role runs, keyed by role (worker, prefill, decode; server for trtllm-serve):
{algo, moeBackend, reason}. OVERRIDE_QUANT_ALGO wins when set; otherwise TensorRT-LLM decides at start
by GPU and MoE backend (ModelConfig.get_mxfp4_quant_algo, FACTS.md): Blackwell runs W4A8_MXFP4_FP8 with
the TRITON MoE backend and W4A8_MXFP4_MXFP8 with any other; Hopper runs W4A16_MXFP4. A role without
moe_config.backend gets TensorRT-LLM's default backend, which is not TRITON.
Usage: {{ $quant := include "gpt-oss.quantization" . | fromYaml }}
*/}}
{{- define "gpt-oss.quantization" -}}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $family := ternary "Blackwell" "Hopper" (and $gpu.blackwell true) }}
{{- $roles := dict }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $_ := set $roles "server" (dict "override" .Values.trtllmServe.overrideQuantAlgo "overrideKey" "trtllmServe.overrideQuantAlgo" "backend"
  (include "gpt-oss.trtllmServe.moeBackend" .)) }}
{{- else }}
{{- range $row := include "gpt-oss.roleTable" . | fromJsonArray }}
{{- $role := get $.Values.workers $row.key }}
{{- if $role.enabled }}
{{- $backend := get (get (default dict $role.engine) "moe_config" | default dict) "backend" | default "" }}
{{- $_ := set $roles $row.key (dict "override" $.Values.workers.overrideQuantAlgo "overrideKey" "workers.overrideQuantAlgo" "backend" $backend) }}
{{- end }}
{{- end }}
{{- end }}
{{- $out := dict }}
{{- range $key, $r := $roles }}
{{- $backendText := ternary (printf "%s MoE" $r.backend) "the default MoE backend (unset, not TRITON)" (ne $r.backend "") }}
{{- $algo := "W4A16_MXFP4" }}
{{- $reason := "" }}
{{- if $r.override }}
{{- $algo = $r.override }}
{{- $reason = printf "OVERRIDE_QUANT_ALGO set by %s" $r.overrideKey }}
{{- else }}
{{- if $gpu.blackwell }}
{{- $algo = ternary "W4A8_MXFP4_FP8" "W4A8_MXFP4_MXFP8" (eq $r.backend "TRITON") }}
{{- end }}
{{- $reason = printf "TensorRT-LLM's default on %s with %s" $family $backendText }}
{{- end }}
{{- $_ := set $out $key (dict "algo" $algo "moeBackend" (default "default" $r.backend) "reason" $reason) }}
{{- end }}
{{- toYaml $out }}
{{- end }}
