{{/*
Every cross-field rule of the values, in one place; each failure names the keys, the values and
what is allowed. The schema has already checked types, enums and minimums. gpt-oss.plan runs
this first, so no template computes anything from values that break a rule.
Usage: {{ include "gpt-oss.checkValues" . }}
*/}}
{{- define "gpt-oss.checkValues" -}}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $fields := include "gpt-oss.trtllmFields" . | fromYaml }}
{{- $derivedKeys := dict "tensor_parallel_size" "tensorParallelSize" "pipeline_parallel_size" "pipelineParallelSize" "moe_expert_parallel_size" "expertParallelSize" "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize" "max_num_tokens" "maxNumTokens" "max_seq_len" "maxSeqLen" }}
{{- $w := .Values.workers }}
{{- $bench := .Values.benchmark }}

{{- /* Topology: aggregated (worker) or disaggregated (prefill + decode), never both. */}}
{{- if and $w.worker.enabled (or $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf "workers.worker.enabled is true together with workers.prefill.enabled=%v / workers.decode.enabled=%v: choose aggregated (worker only) or disaggregated (prefill and decode)" $w.prefill.enabled $w.decode.enabled) }}
{{- end }}
{{- if not (or $w.worker.enabled $w.prefill.enabled $w.decode.enabled) }}
{{- fail "no worker role is enabled: set workers.worker.enabled=true (aggregated) or workers.prefill.enabled=true and workers.decode.enabled=true (disaggregated)" }}
{{- end }}
{{- if and (not $w.worker.enabled) (ne $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf "a disaggregated deployment needs both roles: workers.prefill.enabled=%v, workers.decode.enabled=%v; enable both, or use workers.worker alone" $w.prefill.enabled $w.decode.enabled) }}
{{- end }}

{{- /* Hardware. */}}
{{- if and (eq .Values.gpu.type "GB200") (ne .Values.gpu.nodeArch "arm64") }}
{{- fail (printf "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=%s; allowed: gpu.nodeArch=arm64" .Values.gpu.nodeArch) }}
{{- end }}
{{- if and (eq $w.overrideQuantAlgo "W4A8_MXFP4_MXFP8") (not $gpu.blackwell) }}
{{- fail (printf "workers.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=%s; allowed: gpu.type B200 or GB200, or workers.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty" .Values.gpu.type) }}
{{- end }}

{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
{{- $tp := int $role.tensorParallelSize }}
{{- $gpus := mul $tp (int $role.pipelineParallelSize) }}
{{- if mod $tp (int $role.expertParallelSize) }}
{{- fail (printf "%s.expertParallelSize=%d must divide %s.tensorParallelSize=%d: the MoE layers split the %d tensor-parallel ranks into expert-parallel groups; allowed: a divisor of %d" $key (int $role.expertParallelSize) $key $tp $tp $tp) }}
{{- end }}
{{- if and $role.attentionDP (eq $tp 1) }}
{{- fail (printf "%s.attentionDP=true needs %s.tensorParallelSize > 1 (attention-DP runs one batch per tensor-parallel rank); set attentionDP=false or tensorParallelSize 2, 4 or 8" $key $key) }}
{{- end }}
{{- if gt $gpus (int $gpu.perNode) }}
{{- fail (printf "%s needs %d GPUs per pod (tensorParallelSize %d x pipelineParallelSize %d), but a %s node has %d (gpu.perNode); allowed: at most %d GPUs per pod" $key $gpus $tp (int $role.pipelineParallelSize) $.Values.gpu.type (int $gpu.perNode) (int $gpu.perNode)) }}
{{- end }}

{{- /* Engine keys: TensorRT-LLM refuses unknown keys 30 minutes into a load. */}}
{{- range $name, $value := $role.engine }}
{{- if hasKey $derivedKeys $name }}
{{- fail (printf "%s.engine.%s is set by the chart from %s.%s; set that instead" $key $name $key (get $derivedKeys $name)) }}
{{- end }}
{{- if not (has $name $fields.top) }}
{{- fail (printf "%s.engine.%s is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM 1.2/1.3), so the worker would fail at start; allowed: %s" $key $name (join ", " $fields.top)) }}
{{- end }}
{{- $nestedFields := get $fields.nested $name }}
{{- if and $nestedFields (kindIs "map" $value) }}
{{- range $sub, $_ := $value }}
{{- if not (has $sub $nestedFields) }}
{{- fail (printf "%s.engine.%s.%s is not a key of %s; allowed: %s" $key $name $sub $name (join ", " $nestedFields)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /* The benchmark's sequences must fit the engines that serve them. */}}
{{- if $bench.enabled }}
{{- $isl := int $bench.inputTokensMean }}
{{- $osl := int $bench.outputTokensMean }}
{{- $maxSeqLen := ternary 131072 (int $role.maxSeqLen) (kindIs "invalid" $role.maxSeqLen) }}
{{- $maxNumTokens := ternary 8192 (int $role.maxNumTokens) (kindIs "invalid" $role.maxNumTokens) }}
{{- $needed := ternary $isl (add $isl $osl) (eq $row.mode "prefill") }}
{{- if gt $needed $maxSeqLen }}
{{- fail (printf "benchmark.inputTokensMean=%d%s = %d tokens exceed %s.maxSeqLen=%d; raise %s.maxSeqLen to at least %d or shorten the benchmark" $isl (ternary "" (printf " + benchmark.outputTokensMean=%d" $osl) (eq $row.mode "prefill")) $needed $key $maxSeqLen $key $needed) }}
{{- end }}
{{- if and (ne $row.mode "decode") (gt $isl $maxNumTokens) (not (get (default dict $role.engine) "enable_chunked_prefill")) }}
{{- fail (printf "benchmark.inputTokensMean=%d exceeds %s.maxNumTokens=%d%s and chunked prefill is off: set %s.engine.enable_chunked_prefill=true or raise %s.maxNumTokens to at least %d" $isl $key $maxNumTokens (ternary " (the TensorRT-LLM default)" "" (kindIs "invalid" $role.maxNumTokens)) $key $key $isl) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- /* A disaggregated pair moves the KV cache between engines: both need the transfer backend. */}}
{{- if $w.prefill.enabled }}
{{- range $roleKey := list "prefill" "decode" }}
{{- $transceiver := get (default dict (get $w $roleKey).engine) "cache_transceiver_config" | default dict }}
{{- if not (get $transceiver "backend") }}
{{- fail (printf "workers.%s.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache through it; allowed: UCX, NIXL, MPI or DEFAULT" $roleKey) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Extra component fields: only those of the chosen DGD API version, never the chart's own. */}}
{{- $fieldsByVersion := dict
  "nvidia.com/v1beta1" (dict
    "owned" (list "name" "type" "replicas" "podTemplate" "sharedMemorySize" "runtimeVersionOverride")
    "allowed" (list "minAvailable" "compilationCache" "modelRef" "scalingAdapter" "globalDynamoNamespace" "topologyConstraint" "providerOverride" "experimental"))
  "nvidia.com/v1alpha1" (dict
    "owned" (list "componentType" "subComponentType" "replicas" "resources" "sharedMemory" "envs" "volumeMounts" "extraPodSpec" "extraPodMetadata" "runtimeVersionOverride")
    "allowed" (list "minAvailable" "envFromSecret" "annotations" "labels" "dynamoNamespace" "globalDynamoNamespace" "livenessProbe" "readinessProbe" "modelRef" "scalingAdapter" "ingress" "topologyConstraint" "providerOverride" "checkpoint" "gpuMemoryService" "failover")) }}
{{- $api := .Values.dynamo.apiVersion }}
{{- $other := ternary "nvidia.com/v1alpha1" "nvidia.com/v1beta1" (eq $api "nvidia.com/v1beta1") }}
{{- $mine := get $fieldsByVersion $api }}
{{- $theirs := get $fieldsByVersion $other }}
{{- range $field, $_ := $w.componentFields }}
{{- if has $field $mine.owned }}
{{- fail (printf "workers.componentFields.%s is set by the chart for %s components; use the chart's own values instead" $field $api) }}
{{- else if not (has $field $mine.allowed) }}
{{- if or (has $field $theirs.owned) (has $field $theirs.allowed) }}
{{- fail (printf "workers.componentFields.%s exists only in %s DynamoGraphDeployments, but dynamo.apiVersion=%s; allowed here: %s" $field $other $api (join ", " $mine.allowed)) }}
{{- else }}
{{- fail (printf "workers.componentFields.%s is not a %s component field this chart passes through; allowed: %s" $field $api (join ", " $mine.allowed)) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Images: the DGD admission webhook needs a Dynamo version it can read. */}}
{{- $tag := toString .Values.dynamo.image.tag }}
{{- if and (not (regexMatch "^v?[0-9]+\\.[0-9]+\\.[0-9]+([-+.].*)?$" $tag)) (not .Values.dynamo.runtimeVersionOverride) }}
{{- fail (printf "dynamo.image.tag=%s is not a semantic version, so the Dynamo operator cannot tell the runtime version: set dynamo.runtimeVersionOverride to the Dynamo version the image runs, e.g. 1.2.1" $tag) }}
{{- end }}
{{- end }}
