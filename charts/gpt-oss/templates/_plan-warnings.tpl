{{- /* The sizing warnings: configurations that render and run, but badly, read from the plan's numbers. */}}

{{/*
Sizing warnings: configurations that render and run, but badly. Uses FACTS.md's KV formula
(18*L*1024*b + 18*min(L,128)*1024*b bytes per sequence of L tokens), GPU memory, and the per-GPU-type
weights, prefill throughput and inter-token latency aiconfigurator predicted (gpt-oss.sizingTables).
A target that warns on purpose (a published recipe kept as published) says why in
benchmark.expectedWarnings, and the warning carries that reason.
Returns a YAML list of sentences.
Usage: {{ range include "gpt-oss.warnings" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.warnings" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $tables := include "gpt-oss.sizingTables" . | fromJson }}
{{- $sizing := get $tables.gpus .Values.gpu.type }}
{{- /* The tables of the quantization that runs (gpt-oss.quantization; moeModes names the aiconfigurator mode that
models it): prefill's for prompts, decode's for tokens. */}}
{{- $quantization := include "gpt-oss.quantization" . | fromYaml }}
{{- $prefillAlgo := "" }}
{{- $decodeAlgo := "" }}
{{- range $plan.roles }}
{{- $algo := (get $quantization .key).algo }}
{{- if and (ne .mode "decode") (not $prefillAlgo) }}{{ $prefillAlgo = $algo }}{{ end }}
{{- if and (ne .mode "prefill") (not $decodeAlgo) }}{{ $decodeAlgo = $algo }}{{ end }}
{{- end }}
{{- $prefillQuant := get $sizing.moeModes $prefillAlgo }}
{{- $quant := get $sizing.moeModes $decodeAlgo }}
{{- $bench := .Values.benchmark }}
{{- $concurrency := int $plan.benchmark.concurrency }}
{{- $isl := int $bench.inputTokensMean }}
{{- $osl := int $bench.outputTokensMean }}
{{- $warnings := list }}
{{- $expected := $bench.expectedWarnings }}
{{- $slots := int $plan.decodeSlots }}
{{- if gt $concurrency $slots }}
{{- $parts := list }}
{{- range $plan.roles }}{{ if ne .mode "prefill" }}{{ $parts = append $parts
  (printf "%s: maxBatchSize %d x %d attention-DP ranks x %d replicas" .valuesKey (int .maxBatchSize) (int .attentionDpRanks)
  (int .replicas)) }}{{ end }}{{ end }}
{{- $warnings = append $warnings
  (printf "benchmark concurrency %d exceeds the %d decode slots (%s): %d requests will queue and inflate TTFT%s" $concurrency $slots (join "; " $parts)
  (sub $concurrency $slots) (ternary (printf "; expected: %s" $expected.decodeSlots) "" (ne $expected.decodeSlots ""))) }}
{{- end }}
{{- /* The admission gate (dynamo.admissionGate, per attention-DP rank): what it rejects with 529 instead of queueing. */}}
{{- $gate := .Values.dynamo.admissionGate }}
{{- $capacity := int $plan.admissionCapacity }}
{{- if and $capacity (gt $concurrency $capacity) }}
{{- $parts := list }}
{{- range $plan.roles }}{{ if and (ne .mode "prefill") .gateAdmitsPerReplica }}{{ $parts = append $parts
  (printf "%s: %d attention-DP ranks x %d replicas" .valuesKey (int .attentionDpRanks) (int .replicas)) }}{{ end }}{{ end }}
{{- $warnings = append $warnings (printf (print "benchmark concurrency %d exceeds the %d requests the workers' admission "
  "gates take (dynamo.admissionGate: engineRequestLimit %d + requestQueueLimit %d per attention-DP rank; %s): %d "
  "requests are rejected with HTTP 529, not queued") $concurrency $capacity (int $gate.engineRequestLimit)
  (int $gate.requestQueueLimit) (join "; " $parts) (sub $concurrency $capacity)) }}
{{- end }}
{{- if not (kindIs "invalid" $gate.engineRequestLimit) }}
{{- range $plan.roles }}
{{- if and (ne .mode "prefill") (lt (int $gate.engineRequestLimit) (int .maxBatchSize)) }}
{{- $warnings = append $warnings (printf (print "dynamo.admissionGate.engineRequestLimit %d is below %s.maxBatchSize %d: "
  "the gate admits fewer requests per attention-DP rank than the engine batches, so the batch never fills")
  (int $gate.engineRequestLimit) .valuesKey (int .maxBatchSize)) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $plan.roles }}
{{- if ne .mode "prefill" }}
{{- $role := ternary $.Values.trtllmServe (get $.Values.workers .key) (eq .key "server") }}
{{- $kvDtype := get (get (default dict $role.engine) "kv_cache_config" | default dict) "dtype" | default "auto" }}
{{- $bytesPerValue := ternary 1 2 (eq $kvDtype "fp8") }}
{{- $tokens := add $isl $osl }}
{{- $perSequence := mul 18 1024 $bytesPerValue (add $tokens (min $tokens 128)) }}
{{- $needGiB := divf (mul $perSequence $concurrency) 1073741824.0 }}
{{- $gpuGiB := divf (int $gpu.memoryMiB) 1024.0 }}
{{- $shape := printf "tp%d%s" (int .gpusPerReplica) (ternary "-adp" "" (and $role.attentionDP true)) }}
{{- $weightsGiB := ternary (get $sizing.weightsGiBPerGpu $shape) (divf $sizing.weightsGiBPerGpu.tp1 (int .gpusPerReplica))
  (hasKey $sizing.weightsGiBPerGpu $shape) }}
{{- $freeGiB := mulf (subf (subf $gpuGiB $weightsGiB) $sizing.otherGiBPerGpu) $role.freeGpuMemoryFraction (int .gpus) }}
{{- if gt $needGiB $freeGiB }}
{{- $warnings = append $warnings
  (printf (print "KV cache too small for the benchmark on %s: %d sequences of %d tokens need %.0f GiB of %s KV cache, "
  "but %d %s GPUs keep about %.0f GiB (free_gpu_memory_fraction %v of the memory left after %.1f GiB of "
  "weights and %.1f GiB of runtime per GPU); requests will be evicted or queue") .valuesKey $concurrency $tokens $needGiB
  (ternary "fp8" "bf16" (eq $kvDtype "fp8")) (int .gpus) $.Values.gpu.type $freeGiB $role.freeGpuMemoryFraction $weightsGiB $sizing.otherGiBPerGpu) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* Prefill-bound: only where prefill has GPUs of its own (disaggregated). An aggregated worker prefills and decodes
on the same GPUs, in turns: per-GPU tables cannot say which of the two it runs out of (tools/plan.py --predict models
that). */}}
{{- if $plan.disaggregated }}
{{- /* Prefill tokens/s per GPU at the shortest tabulated prompt length that holds the benchmark's prompt. */}}
{{- $rows := get $sizing.prefillTokensPerSecondPerGpu $prefillQuant }}
{{- $prefillPerGpu := (last $rows).tokensPerSecondPerGpu }}
{{- range (reverse $rows) }}{{ if ge (int .isl) $isl }}{{ $prefillPerGpu = .tokensPerSecondPerGpu }}{{ end }}{{ end }}
{{- /* Inter-token latency at the sequences per decode GPU the benchmark fills (the next tabulated count up). */}}
{{- $decodeGpus := int $plan.decodeGpus }}
{{- $perGpu := div (sub (add (min $slots $concurrency) $decodeGpus) 1) $decodeGpus }}
{{- $itlRows := get $sizing.interTokenLatencyMs $quant }}
{{- $itl := (last $itlRows).ms }}
{{- range (reverse $itlRows) }}{{ if ge (int .sequencesPerGpu) (int $perGpu) }}{{ $itl = .ms }}{{ end }}{{ end }}
{{- $prefillGpus := int $plan.prefillGpus }}
{{- $prefillRate := divf (mul $prefillGpus (int $prefillPerGpu)) $isl }}
{{- $neededRate := divf (mul $concurrency 1000) (mulf $osl $itl) }}
{{- if lt (mulf $prefillRate 2) $neededRate }}
{{- /* Read from per-GPU tables, not the rendered engines (tools/plan.py --predict models those, and prints their
figures instead of these): prefill 8192 tokens a step, decode on the tables' reference worker. */}}
{{- $warnings = append $warnings
  (printf (print "prefill-bound: %d prefill %s about %.1f requests/s of %d tokens (per-GPU tables, 8192 tokens a "
  "prefill step), but %d users finishing %d tokens at %.1f ms/token (%d sequences per decode GPU) "
  "need about %.0f requests/s; expect TTFT to grow while requests queue for prefill (add prefill GPUs "
  "or replicas; per-GPU tables of %s; tools/plan.py --predict models the rendered engines)%s") $prefillGpus
  (ternary "GPU serves" "GPUs serve" (eq $prefillGpus 1)) $prefillRate $isl $concurrency $osl $itl (int $perGpu) $neededRate $tables.model
  (ternary (printf "; expected: %s" $expected.prefillBound) "" (ne $expected.prefillBound ""))) }}
{{- end }}
{{- end }}
{{- $warnings = concat $warnings (include "gpt-oss.autoscalingWarnings" . | fromYamlArray) }}
{{- $warnings = concat $warnings (include "gpt-oss.engineKeyWarnings" . | fromYamlArray) }}
{{- /* What the values let through that the chart would otherwise refuse, or that holds only if kept true (issue 44). */}}
{{- $warnings = concat $warnings (include "gpt-oss.safetyWarnings" . | fromYamlArray) }}
{{- toYaml $warnings }}
{{- end }}
