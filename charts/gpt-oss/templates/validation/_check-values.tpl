{{/*
Every cross-field rule of the values, one define per concern, each failure naming the keys, the values and
what is allowed. The schema has already checked types, enums and minimums. templates/validation/check-values.yaml
calls this, and Helm renders that file before any other template (the deepest folder first, then names in
reverse order; tests/test_check_values.py checks it), so a refusal names check-values.yaml and no template
computes anything from values that break a rule.
A new concern: a new define `gpt-oss.checkValues.<concern>` at the end of this file, and one include line
at the end of the list below.
Usage: {{ include "gpt-oss.checkValues" . }}
*/}}
{{- define "gpt-oss.checkValues" -}}
{{- include "gpt-oss.checkValues.gpu" . }}
{{- include "gpt-oss.checkValues.autoscaling" . }}
{{- include "gpt-oss.checkValues.trtllmServe" . }}
{{- include "gpt-oss.checkValues.topology" . }}
{{- include "gpt-oss.checkValues.quantization" . }}
{{- include "gpt-oss.checkValues.parallelism" . }}
{{- include "gpt-oss.checkValues.engine" . }}
{{- include "gpt-oss.checkValues.benchmark" . }}
{{- include "gpt-oss.checkValues.componentFields" . }}
{{- include "gpt-oss.checkValues.dynamoAdmission" . }}
{{- include "gpt-oss.checkValues.exposure" . }}
{{- include "gpt-oss.checkValues.disruption" . }}
{{- include "gpt-oss.checkValues.routing" . }}
{{- include "gpt-oss.checkValues.modelSource" . }}
{{- include "gpt-oss.checkValues.monitoring" . }}
{{- include "gpt-oss.checkValues.gracefulShutdown" . }}
{{- end }}

{{/*
Hardware: gpu.nodeArch and gpu.productLabel, where set, agree with gpu.type (gpt-oss.gpuTypes). A product label
naming none of the known GPU families (a relabelled node) is the user's choice.
Usage: {{ include "gpt-oss.checkValues.gpu" . }}
*/}}
{{- define "gpt-oss.checkValues.gpu" -}}
{{- $gpu := .Values.gpu }}
{{- $type := get (include "gpt-oss.gpuTypes" . | fromYaml) $gpu.type }}
{{- if and (not (kindIs "invalid" $gpu.nodeArch)) (ne $gpu.nodeArch $type.nodeArch) }}
{{- if eq $gpu.type "GB200" }}
{{- fail (printf "gpu.type=GB200 runs only on ARM64 (Grace) nodes, but gpu.nodeArch=%s; allowed: gpu.nodeArch=arm64" $gpu.nodeArch) }}
{{- end }}
{{- fail (printf "gpu.type=%s comes in AMD64 (x86) nodes, but gpu.nodeArch=%s; allowed: gpu.nodeArch=amd64, or null to follow gpu.type" $gpu.type $gpu.nodeArch) }}
{{- end }}
{{- if $gpu.productLabel }}
{{- $named := "" }}
{{- /* GB200 and GH200 before B200 and H200, whose names they contain. */}}
{{- range $family := list "GB200" "GH200" "B200" "H200" "H100" }}
{{- if and (not $named) (contains $family (upper $gpu.productLabel)) }}{{ $named = $family }}{{ end }}
{{- end }}
{{- if and $named (ne $named $gpu.type) }}
{{- fail (printf "gpu.productLabel=%s is the label of %s nodes, but gpu.type=%s; allowed: the nvidia.com/gpu.product label of %s nodes (%s by default), \"\" to select no product, or null to follow gpu.type" $gpu.productLabel $named $gpu.type $gpu.type $type.productLabel) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Autoscaling and planner (issue 16): scalers only on deployed roles, never below 1 replica, never
together with the planner on a worker role; the planner only with Dynamo, and only with settings the
1.2.1 planner starts with (PlannerConfig._validate_config).
Usage: {{ include "gpt-oss.checkValues.autoscaling" . }}
*/}}
{{- define "gpt-oss.checkValues.autoscaling" -}}
{{- $w := .Values.workers }}
{{- $dynamo := eq .Values.runtime "dynamo" }}
{{- $scalable := list (dict "key" "frontend" "autoscaling" .Values.frontend.autoscaling "deployed" $dynamo "why" (printf "runtime=%s" .Values.runtime)) }}
{{- range $roleKey := list "worker" "prefill" "decode" }}
{{- $role := get $w $roleKey }}
{{- $scalable = append $scalable (dict "key" (printf "workers.%s" $roleKey) "autoscaling" $role.autoscaling "deployed" (and $dynamo $role.enabled) "why" (ternary (printf "workers.%s.enabled=false" $roleKey) (printf "runtime=%s" $.Values.runtime) $dynamo)) }}
{{- end }}
{{- $scalable = append $scalable (dict "key" "trtllmServe" "autoscaling" .Values.trtllmServe.autoscaling "deployed" (not $dynamo) "why" (printf "runtime=%s" .Values.runtime)) }}
{{- range $s := $scalable }}
{{- $a := $s.autoscaling }}
{{- if $a.enabled }}
{{- if not $s.deployed }}
{{- fail (printf "%s.autoscaling.enabled=true, but %s is not deployed (%s); turn %s.autoscaling.enabled off or deploy the role" $s.key $s.key $s.why $s.key) }}
{{- end }}
{{- if lt (int $a.minReplicas) 1 }}
{{- fail (printf "%s.autoscaling.minReplicas=%d is below 1: %s; allowed: minReplicas 1 or more" $s.key (int $a.minReplicas) (ternary "a Dynamo frontend with no workers drops the model from /v1/models, and then nothing scales it up again" "trtllm-serve has no activator, so nothing would scale a Deployment at zero up again" $dynamo)) }}
{{- end }}
{{- if lt (int $a.maxReplicas) (int $a.minReplicas) }}
{{- fail (printf "%s.autoscaling.maxReplicas=%d is below %s.autoscaling.minReplicas=%d; allowed: maxReplicas >= minReplicas" $s.key (int $a.maxReplicas) $s.key (int $a.minReplicas)) }}
{{- end }}
{{- if and $.Values.planner.enabled (hasPrefix "workers." $s.key) }}
{{- fail (printf "planner.enabled=true and %s.autoscaling.enabled=true: the planner scales the worker roles, and a %s on the same role would fight it (one autoscaler per service); turn %s.autoscaling.enabled off (frontend.autoscaling may stay)" $s.key (ternary "KEDA ScaledObject" "HPA" (eq $a.scaler "keda")) $s.key) }}
{{- end }}
{{- end }}
{{- end }}
{{- $pl := .Values.planner }}
{{- if $pl.enabled }}
{{- if not $dynamo }}
{{- fail (printf "planner.enabled=true needs runtime=dynamo (the SLA planner scales DynamoGraphDeployment components), but runtime=%s; use trtllmServe.autoscaling instead" .Values.runtime) }}
{{- end }}
{{- /* With another optimizationTarget the planner forces load scaling on and throughput scaling off. */}}
{{- if eq $pl.optimizationTarget "sla" }}
{{- if not (or $pl.throughputScaling $pl.loadScaling) }}
{{- fail "planner.throughputScaling=false and planner.loadScaling=false: the planner refuses to start without a scaling mode; turn one on" }}
{{- end }}
{{- if and $pl.throughputScaling (eq $pl.preDeploymentSweepingMode "none") }}
{{- fail "planner.throughputScaling=true with planner.preDeploymentSweepingMode=none: the 1.2.1 planner refuses to start (throughput scaling needs a pre-deployment sweep to model the engines); allowed: preDeploymentSweepingMode rapid or thorough, or throughputScaling=false" }}
{{- end }}
{{- if and $pl.throughputScaling $pl.loadScaling (ge (int $pl.loadAdjustmentIntervalSeconds) (int $pl.throughputAdjustmentIntervalSeconds)) }}
{{- fail (printf "planner.loadAdjustmentIntervalSeconds=%d is not below planner.throughputAdjustmentIntervalSeconds=%d: the 1.2.1 planner refuses to start (load scaling is the fast loop, throughput scaling the slow one); allowed: loadAdjustmentIntervalSeconds < %d" (int $pl.loadAdjustmentIntervalSeconds) (int $pl.throughputAdjustmentIntervalSeconds) (int $pl.throughputAdjustmentIntervalSeconds)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Topology (runtime dynamo): aggregated (workers.worker) or disaggregated (prefill + decode), never both.
Usage: {{ include "gpt-oss.checkValues.topology" . }}
*/}}
{{- define "gpt-oss.checkValues.topology" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $w := .Values.workers }}
{{- if and $w.worker.enabled (or $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf "workers.worker.enabled is true together with workers.prefill.enabled=%v / workers.decode.enabled=%v: choose aggregated (worker only) or disaggregated (prefill and decode)" $w.prefill.enabled $w.decode.enabled) }}
{{- end }}
{{- if not (or $w.worker.enabled $w.prefill.enabled $w.decode.enabled) }}
{{- fail "no worker role is enabled: set workers.worker.enabled=true (aggregated) or workers.prefill.enabled=true and workers.decode.enabled=true (disaggregated)" }}
{{- end }}
{{- if and (not $w.worker.enabled) (ne $w.prefill.enabled $w.decode.enabled) }}
{{- fail (printf "a disaggregated deployment needs both roles: workers.prefill.enabled=%v, workers.decode.enabled=%v; enable both, or use workers.worker alone" $w.prefill.enabled $w.decode.enabled) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Quantization (runtime dynamo): an override the GPU can run.
Usage: {{ include "gpt-oss.checkValues.quantization" . }}
*/}}
{{- define "gpt-oss.checkValues.quantization" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $w := .Values.workers }}
{{- if and (eq $w.overrideQuantAlgo "W4A8_MXFP4_MXFP8") (not $gpu.blackwell) }}
{{- fail (printf "workers.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=%s; allowed: gpu.type B200 or GB200, or workers.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty" .Values.gpu.type) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Parallelism of each worker role (runtime dynamo): expert-parallel groups, attention-DP, GPUs per pod.
Usage: {{ include "gpt-oss.checkValues.parallelism" . }}
*/}}
{{- define "gpt-oss.checkValues.parallelism" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $w := .Values.workers }}
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
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Engine YAML of each worker role (runtime dynamo): TensorRT-LLM keys only, none the chart derives; a
disaggregated pair with its KV transfer backend.
Usage: {{ include "gpt-oss.checkValues.engine" . }}
*/}}
{{- define "gpt-oss.checkValues.engine" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $fields := include "gpt-oss.trtllmFields" . | fromYaml }}
{{- $derivedKeys := dict "tensor_parallel_size" "tensorParallelSize" "pipeline_parallel_size" "pipelineParallelSize" "moe_expert_parallel_size" "expertParallelSize" "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize" "max_num_tokens" "maxNumTokens" "max_seq_len" "maxSeqLen" }}
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
{{- if not (get $transceiver "backend") }}
{{- fail (printf "workers.%s.engine.cache_transceiver_config.backend is not set: prefill and decode exchange the KV cache through it; allowed: UCX, NIXL, MPI or DEFAULT" $roleKey) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The benchmark's sequences fit the engines that serve them (runtime dynamo).
Usage: {{ include "gpt-oss.checkValues.benchmark" . }}
*/}}
{{- define "gpt-oss.checkValues.benchmark" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $w := .Values.workers }}
{{- $bench := .Values.benchmark }}
{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- $role := get $w $row.key }}
{{- if $role.enabled }}
{{- $key := printf "workers.%s" $row.key }}
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
{{- end }}
{{- end }}

{{/*
Extra component fields (runtime dynamo): only those of a v1beta1 DGD component, never the chart's own.
Usage: {{ include "gpt-oss.checkValues.componentFields" . }}
*/}}
{{- define "gpt-oss.checkValues.componentFields" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $owned := list "name" "type" "replicas" "podTemplate" "sharedMemorySize" "runtimeVersionOverride" }}
{{- $allowed := list "minAvailable" "compilationCache" "modelRef" "scalingAdapter" "globalDynamoNamespace" "topologyConstraint" "providerOverride" "experimental" }}
{{- range $field, $_ := .Values.workers.componentFields }}
{{- if has $field $owned }}
{{- fail (printf "workers.componentFields.%s is set by the chart for nvidia.com/v1beta1 components; use the chart's own values instead" $field) }}
{{- else if not (has $field $allowed) }}
{{- fail (printf "workers.componentFields.%s is not a nvidia.com/v1beta1 component field this chart passes through; allowed: %s" $field (join ", " $allowed)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Exposure: an Ingress with hosts, an HTTPRoute with a parent, the upstream endpoint picker only for trtllm-serve.
Usage: {{ include "gpt-oss.checkValues.exposure" . }}
*/}}
{{- define "gpt-oss.checkValues.exposure" -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) }}
{{- fail "ingress.enabled=true needs at least one ingress.hosts entry ({host, paths: [{path: /, pathType: Prefix}]}): an Ingress without a host rule would take every host of its class; set ingress.hosts, or ingress.enabled=false" }}
{{- end }}
{{- if and .Values.httpRoute.enabled (not .Values.httpRoute.parentRefs) }}
{{- fail "httpRoute.enabled=true needs at least one httpRoute.parentRefs entry (the Gateway to attach to, e.g. {name: inference-gateway, namespace: gateway-system}): a route without a parent is never served; set httpRoute.parentRefs, or httpRoute.enabled=false" }}
{{- end }}
{{- if and .Values.inferencePool.enabled (ne .Values.runtime "trtllm-serve") }}
{{- fail "inferencePool.enabled=true renders the upstream endpoint picker for runtime=trtllm-serve, but runtime=dynamo: Dynamo has its own endpoint picker (a DynamoGraphDeployment component of type epp, see Dynamo's docs/kubernetes/gateway-api), which this chart does not render because its Dynamo 1.2.x packaging is unconfirmed; set inferencePool.enabled=false (httpRoute then routes to the frontend), or runtime=trtllm-serve" }}
{{- end }}
{{- end }}

{{/*
Disruption budgets: one limit, and one that lets a node drain.
Usage: {{ include "gpt-oss.checkValues.disruption" . }}
*/}}
{{- define "gpt-oss.checkValues.disruption" -}}
{{- $w := .Values.workers }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if $pdb.enabled }}
{{- $maxSet := not (kindIs "invalid" $pdb.maxUnavailable) }}
{{- $minSet := not (kindIs "invalid" $pdb.minAvailable) }}
{{- if and $maxSet $minSet }}
{{- fail (printf "podDisruptionBudget.minAvailable=%d and podDisruptionBudget.maxUnavailable=%d are both set, but a PodDisruptionBudget takes one of them: set podDisruptionBudget.maxUnavailable=null to use minAvailable, or podDisruptionBudget.minAvailable=null" (int $pdb.minAvailable) (int $pdb.maxUnavailable)) }}
{{- end }}
{{- if not (or $maxSet $minSet) }}
{{- fail "podDisruptionBudget.enabled=true needs podDisruptionBudget.maxUnavailable (default 1) or podDisruptionBudget.minAvailable; set one, or podDisruptionBudget.enabled=false" }}
{{- end }}
{{- if and $maxSet (eq (int $pdb.maxUnavailable) 0) }}
{{- fail "podDisruptionBudget.maxUnavailable=0 never allows an eviction, so a node drain would hang forever; allowed: 1 or more, or podDisruptionBudget.enabled=false" }}
{{- end }}
{{- if $minSet }}
{{- $replicas := dict }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $_ := set $replicas "trtllmServe.replicas" (int .Values.trtllmServe.replicas) }}
{{- else }}
{{- $_ := set $replicas "frontend.replicas" (int .Values.frontend.replicas) }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- if (get $w $key).enabled }}
{{- $_ := set $replicas (printf "workers.%s.replicas" $key) (int (get $w $key).replicas) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $key := keys $replicas | sortAlpha }}
{{- $n := get $replicas $key }}
{{- if ge (int $pdb.minAvailable) $n }}
{{- fail (printf "podDisruptionBudget.minAvailable=%d is not below %s=%d, so that role's budget would never allow an eviction and a node drain would hang forever; allowed: podDisruptionBudget.minAvailable below every role's replicas, or podDisruptionBudget.maxUnavailable instead" (int $pdb.minAvailable) $key $n) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Routing: KV routing needs a runtime that publishes KV events, prefix reuse and one KV block size.
Usage: {{ include "gpt-oss.checkValues.routing" . }}
*/}}
{{- define "gpt-oss.checkValues.routing" -}}
{{- $w := .Values.workers }}
{{- if and (eq .Values.runtime "dynamo") (eq .Values.frontend.routerMode "kv") }}
{{- /* Runtimes before 1.2.0 (no known KV-event flag) are refused by gpt-oss.checkDynamoRelease. */}}
{{- $sizes := dict }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- $role := get $w $key }}
{{- $kvConfig := get (default dict $role.engine) "kv_cache_config" | default dict }}
{{- if and $role.enabled (eq (toString (get $kvConfig "enable_block_reuse")) "false") }}
{{- fail (printf "frontend.routerMode=kv sends each request to the worker that already caches its prefix, but workers.%s.engine.kv_cache_config.enable_block_reuse=false turns that cache off; set it to true (or null: the chart then turns reuse on), or another frontend.routerMode" $key) }}
{{- end }}
{{- if and $role.enabled (hasKey $kvConfig "tokens_per_block") }}
{{- $_ := set $sizes (printf "workers.%s.engine.kv_cache_config.tokens_per_block=%v" $key (get $kvConfig "tokens_per_block")) (int (get $kvConfig "tokens_per_block")) }}
{{- end }}
{{- end }}
{{- if gt (len (values $sizes | uniq)) 1 }}
{{- fail (printf "frontend.routerMode=kv needs one KV block size on the frontend and every worker, but %s differ; set the same tokens_per_block on every role (or none: 32)" (join " and " (keys $sizes | sortAlpha))) }}
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
{{- if hasKey $.derived $name }}
{{- fail (printf "%s.engine.%s is set by the chart from %s.%s; set that instead" $key $name $key (get $.derived $name)) }}
{{- end }}
{{- if not (has $name $fields.top) }}
{{- fail (printf "%s.engine.%s is not a TensorRT-LLM engine key (LlmArgs of TensorRT-LLM %s, the release that runs), so the worker would fail at start; allowed: %s" $key $name $fields.release (join ", " $fields.top)) }}
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
{{- end }}

{{/*
Rules of runtime=trtllm-serve: the pod fits a node, the GPU runs the quantization, the engine YAML and
the extra flags do not fight the chart's, and no Dynamo-only value is changed (it would be ignored).
Usage: {{ include "gpt-oss.checkValues.trtllmServe" . }}
*/}}
{{- define "gpt-oss.checkValues.trtllmServe" -}}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $t := .Values.trtllmServe }}
{{- $gpus := int $t.gpus }}
{{- if gt $gpus (int $gpu.perNode) }}
{{- $fit := list }}
{{- range list 1 4 8 }}{{ if le . (int $gpu.perNode) }}{{ $fit = append $fit (toString .) }}{{ end }}{{ end }}
{{- fail (printf "trtllmServe.gpus=%d needs %d GPUs in one pod, but a %s node has %d (gpu.perNode); allowed: trtllmServe.gpus %s" $gpus $gpus .Values.gpu.type (int $gpu.perNode) (join " or " $fit)) }}
{{- end }}
{{- if and (eq $t.overrideQuantAlgo "W4A8_MXFP4_MXFP8") (not $gpu.blackwell) }}
{{- fail (printf "trtllmServe.overrideQuantAlgo=W4A8_MXFP4_MXFP8 needs Blackwell GPUs, but gpu.type=%s; allowed: gpu.type B200 or GB200, or trtllmServe.overrideQuantAlgo W4A16_MXFP4 (what Hopper runs) or empty" .Values.gpu.type) }}
{{- end }}

{{- /* The engine YAML overrides trtllm-serve's flags: keys the chart writes as flags must come from values. */}}
{{- $fields := include "gpt-oss.trtllmFields" . | fromYaml }}
{{- $derived := dict "tensor_parallel_size" "gpus" "moe_expert_parallel_size" "gpus" "pipeline_parallel_size" "gpus" "enable_attention_dp" "attentionDP" "max_batch_size" "maxBatchSize" }}
{{- include "gpt-oss.checkEngineKeys" (dict "key" "trtllmServe" "engine" $t.engine "derived" $derived "fields" $fields) }}
{{- if hasKey (get (default dict $t.engine) "kv_cache_config" | default dict) "free_gpu_memory_fraction" }}
{{- fail "trtllmServe.engine.kv_cache_config.free_gpu_memory_fraction would silently override --kv_cache_free_gpu_memory_fraction; set trtllmServe.freeGpuMemoryFraction instead" }}
{{- end }}

{{- /* Extra flags: only options the pinned trtllm-serve has, and none the chart already writes. */}}
{{- $options := include "gpt-oss.trtllmServeOptions" . | fromYaml }}
{{- $written := dict "--host" "(the pod listens on all addresses)" "--port" "trtllmServe.httpPort" "--backend" "(always pytorch)" "--tensor_parallel_size" "trtllmServe.gpus" "--tp_size" "trtllmServe.gpus" "--moe_expert_parallel_size" "trtllmServe.gpus" "--ep_size" "trtllmServe.gpus" "--max_batch_size" "trtllmServe.maxBatchSize" "--trust_remote_code" "(always set)" "--config" "trtllmServe.engine" "--extra_llm_api_options" "trtllmServe.engine" "--free_gpu_memory_fraction" "trtllmServe.freeGpuMemoryFraction" "--kv_cache_free_gpu_memory_fraction" "trtllmServe.freeGpuMemoryFraction" }}
{{- range $t.extraArgs }}
{{- if hasPrefix "--" . }}
{{- $name := regexReplaceAll "=.*$" . "" }}
{{- if hasKey $written $name }}
{{- fail (printf "trtllmServe.extraArgs sets %s, which the chart already writes from %s; set that instead" $name (get $written $name)) }}
{{- end }}
{{- if not (has $name $options.names) }}
{{- fail (printf "trtllmServe.extraArgs has %s, which trtllm-serve (%s) does not know, so the server would not start; allowed: %s" $name $options.source (join ", " $options.names)) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Dynamo-only values: a changed one would be ignored without a word. */}}
{{- $defaults := include "gpt-oss.dynamoOnlyDefaults" . | fromYaml }}
{{- $current := dict "workers" .Values.workers "frontend" (pick .Values.frontend "replicas" "routerMode" "httpPort" "resources") "monitoring" (dict "dashboard" (pick .Values.monitoring.dashboard "enabled")) }}
{{- $changed := include "gpt-oss.changedValues" (dict "path" "" "value" $current "default" $defaults) | fromYamlArray }}
{{- if $changed }}
{{- fail (printf "runtime=trtllm-serve deploys no DynamoGraphDeployment, so these Dynamo-only values would be ignored: %s; keep their chart defaults (trtllmServe.* configures this runtime) or set runtime=dynamo" (join ", " $changed)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Paths (a.b.c) where a values map differs from its defaults, leaves compared as JSON (absent = null).
Usage: {{ include "gpt-oss.changedValues" (dict "path" "" "value" $values "default" $defaults) | fromYamlArray }}
*/}}
{{- define "gpt-oss.changedValues" -}}
{{- $changed := list }}
{{- if and (kindIs "map" .value) (kindIs "map" .default) }}
{{- range $key := concat (keys .value) (keys .default) | uniq | sortAlpha }}
{{- $path := ternary $key (printf "%s.%s" $.path $key) (eq $.path "") }}
{{- $changed = concat $changed (include "gpt-oss.changedValues" (dict "path" $path "value" (index $.value $key) "default" (index $.default $key)) | fromYamlArray) }}
{{- end }}
{{- else if ne (toJson .value) (toJson .default) }}
{{- $changed = append $changed .path }}
{{- end }}
{{- toYaml $changed }}
{{- end }}

{{- /*
# Dynamo operator admission rules
What the Dynamo operator's admission webhooks (ai-dynamo/dynamo deploy/operator/internal/webhook) refuse,
refused here first; tests/test_operator_admission.py names the source file, commit and line of each.
Rules that differ between operator releases are decided from the runtime version
(gpt-oss.dynamoRuntimeVersion): the chart assumes the platform runs the release of its runtime image.
*/}}

{{/*
Values the Dynamo operator would refuse at admission, and upgrades it would refuse against the live DGD.
Usage: {{ include "gpt-oss.checkValues.dynamoAdmission" . }}
*/}}
{{- define "gpt-oss.checkValues.dynamoAdmission" -}}
{{- if eq .Values.runtime "dynamo" }}
{{- $runtime := include "gpt-oss.dynamoRuntimeVersion" . | fromYaml }}
{{- $fields := .Values.workers.componentFields }}
{{- $constraint := .Values.dynamo.topologyConstraint }}
{{- $name := include "gpt-oss.fullname" . }}

{{- /* Operators from 1.4.0 read the runtime version from the image tag, or from runtimeVersionOverride. */}}
{{- if not $runtime.version }}
{{- fail (printf "dynamo.image.tag=%s gives no version the Dynamo operator can parse (MAJOR.MINOR.PATCH, then only -prerelease or +build), and operators from 1.4.0 refuse the DGD: \"runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag\"; set dynamo.runtimeVersionOverride to the Dynamo version the image runs, e.g. 1.2.1" (toString .Values.dynamo.image.tag)) }}
{{- end }}

{{- /* The component fields a release serves; minAvailable only on the Grove pathway. */}}
{{- $since := (include "gpt-oss.dynamoRelease" . | fromYaml).admission.componentFieldsSince }}
{{- range $field, $release := $since }}
{{- if and (hasKey $fields $field) (semverCompare (printf "<%s" $release) $runtime.version) }}
{{- fail (printf "workers.componentFields.%s exists in DynamoGraphDeployments from Dynamo %s, but the runtime is %s (%s) and the chart assumes the platform runs that release; use a %s or later image, or leave %s out" $field $release $runtime.version $runtime.source $release $field) }}
{{- end }}
{{- end }}
{{- if hasKey $fields "minAvailable" }}
{{- if not .Values.dynamo.grove }}
{{- fail "workers.componentFields.minAvailable is set, but dynamo.grove=false: the Dynamo operator refuses it on DGDs that Grove does not place (\"minAvailable: Forbidden: is currently supported only for Grove-backed DynamoGraphDeployment components\"); set dynamo.grove=true when the platform runs Grove (global.grove.enabled), or leave minAvailable out" }}
{{- end }}
{{- end }}

{{- /* Topology constraints: a component's needs the deployment-level one, and every constraint a packDomain. */}}
{{- if and (hasKey $fields "topologyConstraint") (not $constraint.clusterTopologyName) }}
{{- fail "workers.componentFields.topologyConstraint is set, but dynamo.topologyConstraint.clusterTopologyName is empty: the Dynamo operator refuses a component topology constraint without a deployment-level one (\"spec.topologyConstraint: Required value: is required when any component topology constraint is set\"); set dynamo.topologyConstraint.clusterTopologyName and dynamo.topologyConstraint.packDomain" }}
{{- end }}
{{- if and (hasKey $fields "topologyConstraint") (not (get (default dict $fields.topologyConstraint) "packDomain")) }}
{{- fail "workers.componentFields.topologyConstraint has no packDomain: the Dynamo operator requires one on every component constraint (\"topologyConstraint.packDomain is required\"); set workers.componentFields.topologyConstraint.packDomain to a domain of the ClusterTopology, e.g. rack" }}
{{- end }}
{{- if and $constraint.packDomain (not $constraint.clusterTopologyName) }}
{{- fail (printf "dynamo.topologyConstraint.packDomain=%s needs dynamo.topologyConstraint.clusterTopologyName: spec.topologyConstraint names the ClusterTopology its domains come from; set it, or empty packDomain" $constraint.packDomain) }}
{{- end }}
{{- if and $constraint.clusterTopologyName (not $constraint.packDomain) }}
{{- fail (printf "dynamo.topologyConstraint.clusterTopologyName=%s is set without dynamo.topologyConstraint.packDomain, and the Frontend carries no constraint of its own: the Dynamo operator then refuses the DGD (1.2: \"spec.services[Frontend].topologyConstraint is required because spec.topologyConstraint.packDomain is not set\"); set dynamo.topologyConstraint.packDomain, e.g. rack" $constraint.clusterTopologyName) }}
{{- end }}

{{- /* Upgrades: the operator refuses renamed components and changed topology constraints after creation. */}}
{{- $live := include "gpt-oss.liveDGD" . | fromJson }}
{{- if $live }}
{{- $liveNames := list }}
{{- range (dig "spec" "components" list $live) }}{{ $liveNames = append $liveNames .name }}{{ end }}
{{- range $key, $_ := (dig "spec" "services" dict $live) }}{{ $liveNames = append $liveNames $key }}{{ end }}
{{- $names := list "Frontend" }}
{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- if (get $.Values.workers $row.key).enabled }}{{ $names = append $names $row.component }}{{ end }}
{{- end }}
{{- if ne (sortAlpha $liveNames | join ", ") (sortAlpha $names | join ", ") }}
{{- fail (printf "the live DynamoGraphDeployment %s/%s has the components %s, but this release renders %s: the Dynamo operator refuses renaming components after creation (\"component topology is immutable and cannot be modified after creation\"), so a release cannot switch between the aggregated (workers.worker) and disaggregated (workers.prefill + workers.decode) topologies; install the new topology as a new release, or helm uninstall %s first (the model cache PVC is kept)" .Release.Namespace $name (sortAlpha $liveNames | join ", ") (sortAlpha $names | join ", ") .Release.Name) }}
{{- end }}
{{- $liveConstraints := dict "spec" (dig "spec" "topologyConstraint" dict $live) }}
{{- range (dig "spec" "components" list $live) }}{{ $_ := set $liveConstraints .name (default dict .topologyConstraint) }}{{ end }}
{{- range $key, $service := (dig "spec" "services" dict $live) }}{{ $_ := set $liveConstraints $key (default dict $service.topologyConstraint) }}{{ end }}
{{- $constraints := dict "spec" (include "gpt-oss.dgdTopologyConstraint" . | fromYaml) "Frontend" dict }}
{{- range $component := without $names "Frontend" }}{{ $_ := set $constraints $component (default dict $fields.topologyConstraint) }}{{ end }}
{{- if ne (toJson $liveConstraints) (toJson $constraints) }}
{{- fail (printf "the topology constraints render %s, but the live DynamoGraphDeployment %s/%s has %s (spec: dynamo.topologyConstraint, workers: workers.componentFields.topologyConstraint): the Dynamo operator refuses adding, removing or changing topology constraints after creation (\"delete and recreate the DynamoGraphDeployment to change topology constraints\"); keep the live values, or helm uninstall %s and install again" (toJson $constraints) .Release.Namespace $name (toJson $liveConstraints) .Release.Name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Model sources (modelCache.source): what each source needs, credentials given one way only, the Kubernetes an
image volume needs, settings of a source that is not chosen, and keys removed in 0.3.0.
Usage: {{ include "gpt-oss.checkValues.modelSource" . }}
*/}}
{{- define "gpt-oss.checkValues.modelSource" -}}
{{- $mc := .Values.modelCache }}
{{- $source := $mc.source }}
{{- $dl := $mc.download }}

{{- /* Removed in 0.3.0: nothing is installed at start any more. */}}
{{- if not (kindIs "invalid" $dl.huggingfaceHubVersion) }}
{{- fail (printf "modelCache.download.huggingfaceHubVersion=%v was removed in 0.3.0: the download Job installs nothing at start, its image (modelCache.download.image, built from images/model-fetch) carries huggingface_hub 1.33.0; remove the key, or opt in to an install from PyPI with modelCache.download.pipInstall=[\"huggingface_hub==%v\"]" $dl.huggingfaceHubVersion $dl.huggingfaceHubVersion) }}
{{- end }}
{{- if not (kindIs "invalid" $dl.hfTransferVersion) }}
{{- fail (printf "modelCache.download.hfTransferVersion=%v was removed in 0.3.0: huggingface_hub 1.x (the download image's) no longer uses hf_transfer; remove the key, and use modelCache.download.transfer=xet for fast downloads" $dl.hfTransferVersion) }}
{{- end }}
{{- if eq $dl.transfer "hf_transfer" }}
{{- fail "modelCache.download.transfer=hf_transfer was removed in 0.3.0: huggingface_hub 1.x (the download image's) no longer uses hf_transfer; allowed: default, or xet (HF_XET_HIGH_PERFORMANCE=1, up to ~64 GB RAM)" }}
{{- end }}

{{- /* Settings of a source that is not chosen would be ignored, silently: say so instead. */}}
{{- $others := dict "huggingface" (list "modelCache.huggingface.endpoint" $mc.huggingface.endpoint) "s3" (list "modelCache.s3.bucket" $mc.s3.bucket) "oci" (list "modelCache.oci.repository" $mc.oci.repository) }}
{{- range $name := keys $others | sortAlpha }}
{{- $setting := get $others $name }}
{{- if and (index $setting 1) (ne $source $name) }}
{{- fail (printf "%s=%s is set, but modelCache.source=%s, so it would be ignored; set modelCache.source=%s, or empty %s" (index $setting 0) (index $setting 1) $source $name (index $setting 0)) }}
{{- end }}
{{- end }}

{{- /* A copy is pinned by its manifest's sha256, as the Hub's is by the revision. */}}
{{- if and (has $source (list "s3" "oci" "pvc")) (not $mc.manifestSha256) }}
{{- fail (printf "modelCache.source=%s needs modelCache.manifestSha256: the sha256 of the copy's model-manifest.json, which tools/mirror-model.py prints when it writes the copy; without it any copy of model.revision would be served" $source) }}
{{- end }}
{{- /* A mirror serves the listing and the bytes: only a pin made elsewhere checks them (docs/security.md). */}}
{{- if and (eq $source "huggingface") $mc.huggingface.endpoint }}
{{- if not (hasPrefix "https://" $mc.huggingface.endpoint) }}
{{- fail (printf "modelCache.huggingface.endpoint=%s is not https://: over plain HTTP anyone on the network can change the files and their hashes alike, and read the token; use the mirror's https:// URL (with modelCache.caBundle for a private CA)" $mc.huggingface.endpoint) }}
{{- end }}
{{- if not $mc.manifestSha256 }}
{{- fail (printf "modelCache.huggingface.endpoint=%s needs modelCache.manifestSha256: a mirror lists the sizes and hashes of the very bytes it serves, so without a pin made elsewhere nothing checks it; run tools/mirror-model.py --endpoint %s (or against https://huggingface.co) and pin the manifest sha256 it prints" $mc.huggingface.endpoint $mc.huggingface.endpoint) }}
{{- end }}
{{- end }}
{{- if and (has $source (list "s3" "oci" "pvc")) (not $dl.enabled) (not (and (eq $source "oci") (eq $mc.oci.mount "imageVolume"))) }}
{{- fail (printf "modelCache.download.enabled=false with modelCache.source=%s: the download Job is what %s the cache and writes the ready marker the pods wait for; keep modelCache.download.enabled=true" $source (ternary "checks" "fills and checks" (eq $source "pvc"))) }}
{{- end }}

{{- if eq $source "s3" }}
{{- if not $mc.s3.bucket }}
{{- fail "modelCache.source=s3 needs modelCache.s3.bucket (and modelCache.s3.prefix, the folder where tools/mirror-model.py wrote model-manifest.json)" }}
{{- end }}
{{- $sa := $mc.s3.serviceAccount }}
{{- if and $mc.s3.credentialsSecret.name (or $sa.create $sa.name) }}
{{- fail (printf "S3 credentials are given two ways: modelCache.s3.credentialsSecret.name=%s and a workload identity (modelCache.s3.serviceAccount.create=%v, name=%q); keep one: empty modelCache.s3.credentialsSecret.name, or set modelCache.s3.serviceAccount.create=false and name=\"\"" $mc.s3.credentialsSecret.name $sa.create $sa.name) }}
{{- end }}
{{- if and $sa.annotations (not $sa.create) }}
{{- fail "modelCache.s3.serviceAccount.annotations are set, but modelCache.s3.serviceAccount.create=false: the chart annotates only a ServiceAccount it creates; set modelCache.s3.serviceAccount.create=true, or annotate your own ServiceAccount and name it in modelCache.s3.serviceAccount.name" }}
{{- end }}
{{- end }}

{{- if eq $source "oci" }}
{{- if not (and $mc.oci.repository $mc.oci.digest) }}
{{- fail (printf "modelCache.source=oci needs modelCache.oci.repository and modelCache.oci.digest (repository=%q, digest=%q): the image is pulled by the digest tools/mirror-model.py printed, never by a tag" $mc.oci.repository $mc.oci.digest) }}
{{- end }}
{{- if eq $mc.oci.mount "imageVolume" }}
{{- if semverCompare "<1.35.0-0" .Capabilities.KubeVersion.Version }}
{{- fail (printf "modelCache.oci.mount=imageVolume needs Kubernetes 1.35 or newer (image volumes are beta and on by default from 1.35), but the cluster is %s; set modelCache.oci.mount=pull, and the download Job copies the image into the cache PVC" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- if $mc.existingClaim }}
{{- fail (printf "modelCache.existingClaim=%s is set, but modelCache.oci.mount=imageVolume uses no PVC (every pod mounts the image); empty modelCache.existingClaim, or set modelCache.oci.mount=pull to copy the image into that claim" $mc.existingClaim) }}
{{- end }}
{{- end }}
{{- end }}

{{- if and (eq $source "pvc") (not $mc.existingClaim) }}
{{- fail (printf "modelCache.source=pvc needs modelCache.existingClaim: the claim that holds the copy in %s/ (the folder tools/mirror-model.py wrote, with model-manifest.json)" .Values.model.id) }}
{{- end }}

{{- if and $mc.caBundle.configMap $mc.caBundle.secret }}
{{- fail (printf "modelCache.caBundle.configMap=%s and modelCache.caBundle.secret=%s are both set: the CA bundle comes from one of them; empty the other" $mc.caBundle.configMap $mc.caBundle.secret) }}
{{- end }}
{{- end }}

{{/*
Rules of what the scalers, the planner and the endpoint picker read (issue 24): each reads only metrics the
configured release serves, and the planner only runs when it can decide.
Usage: {{ include "gpt-oss.checkValues.monitoring" . }}
*/}}
{{- define "gpt-oss.checkValues.monitoring" -}}
{{- $pl := .Values.planner }}
{{- if and $pl.enabled (eq .Values.runtime "dynamo") }}
{{- $version := include "gpt-oss.planner.version" . }}
{{- if and $pl.aicInterpolation.enabled $version (semverCompare "<1.3.0-0" $version) }}
{{- fail (printf "planner.aicInterpolation.enabled=true, but the planner is Dynamo %s (planner.image.tag, else the runtime's version): its aiconfigurator wrapper passes get_model the backend object where every aiconfigurator release (0.8.0 to 0.12.0) takes the backend's name, so the sweep fails at start (\"'TRTLLMBackend' object cannot be converted to 'PyString'\", then \"Failed to obtain pre-deployment performance data\"); set planner.aicInterpolation.enabled=false, or a planner image of Dynamo 1.3.0 or newer" $version) }}
{{- end }}
{{- if and (eq $pl.optimizationTarget "sla") $pl.throughputScaling (not $pl.aicInterpolation.enabled) }}
{{- fail "planner.throughputScaling=true needs the engines' pre-deployment performance, and this deployment has none: dynamo.trtllm serves no get_perf_metrics endpoint (Dynamo 1.2.1 turns that self-benchmark on for vLLM workers only), planner.aicInterpolation.enabled=false, and the chart mounts no profile_results_dir, so the planner stops at start (\"Failed to obtain pre-deployment performance data\"); set planner.throughputScaling=false (load scaling decides from the workers' forward-pass metrics), or planner.aicInterpolation.enabled=true with a planner of Dynamo 1.3.0 or newer" }}
{{- end }}
{{- /* Only load scaling decides (another optimizationTarget forces it on and throughput scaling off). */}}
{{- $loadOnly := or (ne $pl.optimizationTarget "sla") (not $pl.throughputScaling) }}
{{- $runtime := (include "gpt-oss.dynamoRuntimeVersion" . | fromYaml).version }}
{{- if and $loadOnly $runtime (semverCompare "<1.3.0-0" $runtime) }}
{{- range $key := list "worker" "prefill" "decode" }}
{{- $role := get $.Values.workers $key }}
{{- if and $role.enabled $role.attentionDP (gt (int $role.tensorParallelSize) 1) }}
{{- fail (printf "planner.enabled=true: the planner's load scaling decides from the forward-pass metrics the workers publish, and dynamo.trtllm 1.2.1 publishes none under attention DP (publisher.py: \"FPM publisher disabled under attention-DP\"), but workers.%s.attentionDP=true, so the planner would never scale workers.%s; set workers.%s.attentionDP=false, or scale the role with workers.%s.autoscaling instead of the planner" $key $key $key $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $cost := .Values.monitoring.cost }}
{{- if $cost.enabled }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- fail "monitoring.cost.enabled=true with runtime=trtllm-serve: the cost rules divide by the output tokens the Dynamo frontend counts (dynamo_frontend_output_tokens_total), and trtllm-serve serves no token counter (TensorRT-LLM 1.2's collector has request counts and latency histograms only); set monitoring.cost.enabled=false, or runtime=dynamo" }}
{{- end }}
{{- if not .Values.monitoring.prometheusRule.enabled }}
{{- fail "monitoring.cost.enabled=true renders recording rules into the PrometheusRule, but monitoring.prometheusRule.enabled=false; set monitoring.prometheusRule.enabled=true, or monitoring.cost.enabled=false" }}
{{- end }}
{{- if not (hasKey $cost.gpuHourPrice .Values.gpu.type) }}
{{- fail (printf "monitoring.cost.enabled=true needs the price of one %s GPU-hour (gpu.type=%s), and monitoring.cost.gpuHourPrice has none (%s); set monitoring.cost.gpuHourPrice.%s to what you pay, e.g. --set monitoring.cost.gpuHourPrice.%s=5.5: the chart invents no price" .Values.gpu.type .Values.gpu.type (toJson $cost.gpuHourPrice) .Values.gpu.type .Values.gpu.type) }}
{{- end }}
{{- end }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- $release := include "gpt-oss.trtllmServe.release" . | fromYaml }}
{{- if eq (toString $release.servesGauges) "no" }}
{{- $gauges := list "trtllm_num_requests_waiting" "trtllm_num_requests_running" "trtllm_kv_cache_utilization" }}
{{- if .Values.inferencePool.enabled }}
{{- fail (printf "inferencePool.enabled=true: the endpoint picker scores pods by %s, which TensorRT-LLM serves from release 1.3.0 on (PRs #11243 and #12545, after 1.2), but trtllmServe.image.tag=%s is TensorRT-LLM %s, so every pod would look idle and empty; set trtllmServe.image.tag to a TensorRT-LLM release 1.3.0 or newer, or inferencePool.enabled=false" (join ", " $gauges) $release.tag $release.version) }}
{{- end }}
{{- $a := .Values.trtllmServe.autoscaling }}
{{- if $a.enabled }}
{{- $custom := toJson (dict "trigger" $a.trigger "metric" $a.metric) }}
{{- range $gauge := $gauges }}
{{- if contains $gauge $custom }}
{{- fail (printf "trtllmServe.autoscaling reads %s, which TensorRT-LLM serves from release 1.3.0 on (PRs #11243 and #12545, after 1.2), but trtllmServe.image.tag=%s is TensorRT-LLM %s, so the scaler would read nothing and never scale; keep the default trigger (requests waiting in trtllm-serve's queue, from request_queue_time_seconds, which %s serves), or set trtllmServe.image.tag to a release 1.3.0 or newer" $gauge $release.tag $release.version $release.version) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Graceful shutdown: the preStop wait must outlast the readiness probe's two tries (2 s apart, gpt-oss.drainHooks), or
a Service or picker that reads readiness could still send a request after SIGTERM, which the Dynamo 1.2.1 frontend
then fails (its /health stays 200 while it shuts down).
Usage: {{ include "gpt-oss.checkValues.gracefulShutdown" . }}
*/}}
{{- define "gpt-oss.checkValues.gracefulShutdown" -}}
{{- $g := .Values.gracefulShutdown }}
{{- if lt (int $g.preStopSeconds) 5 }}
{{- fail (printf "gracefulShutdown.preStopSeconds=%d is shorter than the readiness probe needs to report the pod draining (two tries, 2 s apart) plus a moment for the endpoints to follow, so requests could still arrive after SIGTERM; allowed: 5 or more (15 by default; longer than your ingress controller's or gateway's endpoint refresh)" (int $g.preStopSeconds)) }}
{{- end }}
{{- end }}
