{{- /* The plan: GPU facts, worker roles, every computed number, and the sizing warnings. */}}

{{/*
Facts per GPU type (FACTS.md): the node it comes in (CPU architecture, GPUs per node, the nvidia.com/gpu.product
label GPU feature discovery gives it), the memory software sees (MiB), Blackwell or not. The one table the
GPU-type defaults come from.
Usage: {{ $types := include "gpt-oss.gpuTypes" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuTypes" -}}
GB200: {nodeArch: arm64, perNode: 4, productLabel: NVIDIA-GB200, memoryMiB: 189471, blackwell: true}
B200: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-B200, memoryMiB: 183359, blackwell: true}
H200: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-H200, memoryMiB: 143771, blackwell: false}
H100: {nodeArch: amd64, perNode: 8, productLabel: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, blackwell: false}
{{- end }}

{{/*
The facts of gpu.type, with gpu.nodeArch, gpu.perNode and gpu.productLabel where the user sets them (null
follows gpu.type; gpt-oss.checkValues.gpu refuses a nodeArch or productLabel that contradicts it).
Usage: {{ $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuFacts" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGpuFacts" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gpuFacts, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGpuFacts" . }} (templates read it through gpt-oss.gpuFacts)
*/}}
{{- define "gpt-oss.computeGpuFacts" -}}
{{- $facts := get (include "gpt-oss.gpuTypes" . | fromYaml) .Values.gpu.type }}
{{- range $key := list "nodeArch" "perNode" "productLabel" }}
{{- $value := index $.Values.gpu $key }}
{{- if not (kindIs "invalid" $value) }}
{{- $_ := set $facts $key $value }}
{{- end }}
{{- end }}
{{- $_ := set $facts "perNode" (int $facts.perNode) }}
{{- toYaml $facts }}
{{- end }}

{{/*
Node labels every GPU pod selects: kubernetes.io/arch, and nvidia.com/gpu.product unless the label is "".
Usage: {{ $selector := include "gpt-oss.gpuNodeSelector" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuNodeSelector" -}}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $selector := dict "kubernetes.io/arch" $gpu.nodeArch }}
{{- with $gpu.productLabel }}
{{- $_ := set $selector "nvidia.com/gpu.product" . }}
{{- end }}
{{- toYaml $selector }}
{{- end }}

{{/*
Worker roles in a fixed order, with the Dynamo component name and disaggregation mode of each.
Usage: {{ range $role := include "gpt-oss.roleTable" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.roleTable" -}}
- key: worker
  component: TRTLLMWorker
  mode: agg
- key: prefill
  component: TRTLLMPrefillWorker
  mode: prefill
- key: decode
  component: TRTLLMDecodeWorker
  mode: decode
{{- end }}

{{/*
The plan of gpt-oss.computePlan, computed once per render (gpt-oss.memo): a dozen templates read one computation.
Usage: {{ $plan := include "gpt-oss.plan" . | fromYaml }}
*/}}
{{- define "gpt-oss.plan" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computePlan" .) }}
{{- end }}

{{/*
The plan: every number the chart computes (GPUs per role and in total, decode slots, benchmark
concurrency and request count, the trtllm-serve startup allowance), for either runtime, computed here
once and read by every template and the tests. Decode slots: max batch size x attention-DP ranks x
replicas of the roles that decode (all but prefill).
Usage: {{ $plan := include "gpt-oss.computePlan" . | fromYaml }} (templates read it through gpt-oss.plan)
*/}}
{{- define "gpt-oss.computePlan" -}}
{{- $roles := list }}
{{- $totalGpus := 0 }}
{{- /* Replica counts an autoscaler or the planner owns, and the DGD fields that turn on their adapters. */}}
{{- $owners := include "gpt-oss.replicaOwners" . | fromYaml }}
{{- if eq .Values.runtime "trtllm-serve" }}
{{- /* One role: the trtllm-serve pods, TP = EP = gpus. */}}
{{- $t := .Values.trtllmServe }}
{{- $gpusPerReplica := int $t.gpus }}
{{- $owner := $owners.server }}
{{- $replicas := int $owner.replicas }}
{{- $gpus := mul $gpusPerReplica $replicas }}
{{- $dpRanks := ternary $gpusPerReplica 1 (and $t.attentionDP true) }}
{{- /* Without --max_batch_size, TensorRT-LLM's default (BuildConfig.max_batch_size, 2048) applies. */}}
{{- $batch := ternary 2048 (int $t.maxBatchSize) (kindIs "invalid" $t.maxBatchSize) }}
{{- $slots := mul $batch $dpRanks $replicas }}
{{- $roles = append $roles (dict "key" "server" "component" "trtllm-serve" "mode" "agg" "valuesKey" "trtllmServe" "replicas" $replicas
  "gpusPerReplica" $gpusPerReplica "gpus" $gpus "attentionDpRanks" $dpRanks "maxBatchSize" $batch "slots" $slots "scaledBy" $owner.scaledBy
  "minReplicas" (int $owner.minReplicas) "maxReplicas" (int $owner.maxReplicas)) }}
{{- $totalGpus = $gpus }}
{{- else }}
{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- $role := get $.Values.workers $row.key }}
{{- if $role.enabled }}
{{- $owner := get $owners $row.key }}
{{- $replicas := int $owner.replicas }}
{{- $gpusPerReplica := mul (int $role.tensorParallelSize) (int $role.pipelineParallelSize) }}
{{- $gpus := mul $gpusPerReplica $replicas }}
{{- $dpRanks := ternary (int $role.tensorParallelSize) 1 (and $role.attentionDP true) }}
{{- $slots := mul (int $role.maxBatchSize) $dpRanks $replicas }}
{{- /* Extra DGD component fields: the user's, then the scaling adapter when something scales the role. */}}
{{- $fields := merge (deepCopy $owner.fields) (deepCopy $.Values.workers.componentFields) }}
{{- $roles = append $roles (dict "key" $row.key "component" $row.component "mode" $row.mode "valuesKey" (printf "workers.%s" $row.key) "replicas"
  $replicas "gpusPerReplica" $gpusPerReplica "gpus" $gpus "attentionDpRanks" $dpRanks "maxBatchSize" (int $role.maxBatchSize) "slots" $slots
  "scaledBy" $owner.scaledBy "minReplicas" (int $owner.minReplicas) "maxReplicas" (int $owner.maxReplicas) "adapter" $owner.adapter "fields" $fields) }}
{{- $totalGpus = add $totalGpus $gpus }}
{{- end }}
{{- end }}
{{- end }}
{{- $decodeSlots := 0 }}
{{- range $roles }}{{ if ne .mode "prefill" }}{{ $decodeSlots = add $decodeSlots .slots }}{{ end }}{{ end }}
{{- $bench := .Values.benchmark }}
{{- $benchGpus := ternary $totalGpus (int $bench.gpuCount) (kindIs "invalid" $bench.gpuCount) }}
{{- $derived := ternary $decodeSlots (mul (int $bench.concurrencyPerGpu) $benchGpus) (eq $bench.concurrencyFrom "decodeSlots") }}
{{- $concurrency := ternary $derived (int $bench.concurrency) (kindIs "invalid" $bench.concurrency) }}
{{- $requests := ternary (mul (int $bench.requestCountMultiplier) $concurrency) (int $bench.requestCount) (kindIs "invalid" $bench.requestCount) }}
{{- $disaggregated := false }}
{{- range $roles }}{{ if ne .mode "agg" }}{{ $disaggregated = true }}{{ end }}{{ end }}
{{- /* DGD components beyond the frontend and workers (the planner), in neutral form for both writers. */}}
{{- $extraComponents := list }}
{{- if and .Values.planner.enabled (ne .Values.runtime "trtllm-serve") }}
{{- $extraComponents = append $extraComponents
  (include "gpt-oss.planner.component" (dict "root" . "plan" (dict "roles" $roles "disaggregated" $disaggregated)) | fromYaml) }}
{{- end }}
runtime: {{ .Values.runtime }}
roles: {{ toYaml $roles | nindent 2 }}
extraComponents: {{ toYaml $extraComponents | nindent 2 }}
{{- if ne .Values.runtime "trtllm-serve" }}
frontend: {{ toYaml $owners.frontend | nindent 2 }}
{{- end }}
totalGpus: {{ $totalGpus }}
decodeSlots: {{ $decodeSlots }}
disaggregated: {{ $disaggregated }}
{{- if eq .Values.runtime "trtllm-serve" }}
trtllmServe:
  # Startup probe: one try every 10 s for trtllmServe.startupTimeoutSeconds.
  startupFailureThreshold: {{ div (add (int .Values.trtllmServe.startupTimeoutSeconds) 9) 10 }}
{{- end }}
benchmark:
  gpuCount: {{ $benchGpus }}
  concurrency: {{ $concurrency }}
  requestCount: {{ $requests }}
{{- end }}

{{/*
A worker role's TensorRT-LLM engine settings: its free-form engine keys plus the keys the chart
derives from the role's structured fields (parallelism, batch, tokens, memory fraction); with kv (the
gpt-oss.kvRouting map) under KV-aware routing, also the block size and KV-cache block reuse.
Usage: {{ include "gpt-oss.engineConfig" (dict "role" .Values.workers.prefill "kv" $kv) | fromYaml }}
*/}}
{{- define "gpt-oss.engineConfig" -}}
{{- $role := .role }}
{{- $engine := deepCopy (default dict $role.engine) }}
{{- $_ := set $engine "tensor_parallel_size" (int $role.tensorParallelSize) }}
{{- $_ = set $engine "pipeline_parallel_size" (int $role.pipelineParallelSize) }}
{{- $_ = set $engine "moe_expert_parallel_size" (int $role.expertParallelSize) }}
{{- $_ = set $engine "enable_attention_dp" (and $role.attentionDP true) }}
{{- $_ = set $engine "max_batch_size" (int $role.maxBatchSize) }}
{{- if not (kindIs "invalid" $role.maxNumTokens) }}
{{- $_ = set $engine "max_num_tokens" (int $role.maxNumTokens) }}
{{- end }}
{{- if not (kindIs "invalid" $role.maxSeqLen) }}
{{- $_ = set $engine "max_seq_len" (int $role.maxSeqLen) }}
{{- end }}
{{- $kv := deepCopy (default dict (get $engine "kv_cache_config")) }}
{{- $_ = set $kv "free_gpu_memory_fraction" $role.freeGpuMemoryFraction }}
{{- if and .kv .kv.enabled }}
{{- $_ = set $kv "tokens_per_block" (int .kv.blockSize) }}
{{- $_ = set $kv "enable_block_reuse" true }}
{{- end }}
{{- $_ = set $engine "kv_cache_config" $kv }}
{{- toYaml $engine }}
{{- end }}

{{/*
The plan as a reader gets it, computed once per render (NOTES.txt formats it; the ConfigMap <fullname>-plan carries
it for tools/plan.py and tools/predict.py): GPUs, layout, each role's shape and quantization, decode slots,
benchmark, sizing warnings, and the TensorRT-LLM release that runs ("" for an unversioned image).
Usage: {{ $doc := include "gpt-oss.planDocument" . | fromYaml }}
*/}}
{{- define "gpt-oss.planDocument" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computePlanDocument" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.planDocument, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computePlanDocument" . }} (templates read it through gpt-oss.planDocument)
*/}}
{{- define "gpt-oss.computePlanDocument" -}}
{{- $plan := include "gpt-oss.plan" . | fromYaml }}
{{- $quantization := include "gpt-oss.quantization" . | fromYaml }}
{{- $trtllmServe := eq .Values.runtime "trtllm-serve" }}
{{- $roles := list }}
{{- range $plan.roles }}
{{- $values := ternary $.Values.trtllmServe (get $.Values.workers .key) $trtllmServe }}
{{- $tp := ternary (int .gpusPerReplica) (int $values.tensorParallelSize) $trtllmServe }}
{{- $ep := ternary (int .gpusPerReplica) (int $values.expertParallelSize) $trtllmServe }}
{{- $roles = append $roles (dict "component" .component "valuesKey" .valuesKey "mode" .mode
  "replicas" (int .replicas) "gpusPerReplica" (int .gpusPerReplica) "gpus" (int .gpus)
  "tensorParallelSize" $tp "expertParallelSize" $ep "attentionDpRanks" (int .attentionDpRanks)
  "slots" (int .slots) "quantization" (get $quantization .key)) }}
{{- end }}
{{- $layout := ternary "trtllm-serve" (ternary "disaggregated" "aggregated" $plan.disaggregated) $trtllmServe }}
{{- $benchmark := dict "gpuCount" (int $plan.benchmark.gpuCount) "concurrency" (int $plan.benchmark.concurrency)
  "requestCount" (int $plan.benchmark.requestCount) }}
{{- $doc := dict "runtime" .Values.runtime "gpuType" .Values.gpu.type "totalGpus" (int $plan.totalGpus) "layout" $layout
  "roles" $roles "decodeSlots" (int $plan.decodeSlots) "benchmark" $benchmark
  "warnings" (include "gpt-oss.warnings" . | fromYamlArray) "trtllmRelease" (include "gpt-oss.trtllmRelease" .)
  "engineKeys" (pick (include "gpt-oss.engineKeyList" . | fromYaml) "release" "list" "summary") }}
{{- toYaml $doc }}
{{- end }}

{{/*
Sizing warnings: configurations that render and run, but badly. Uses FACTS.md's KV formula
(18*L*1024*b + 18*min(L,128)*1024*b bytes per sequence of L tokens), GPU memory, and the per-GPU-type
weights, prefill throughput and inter-token latency aiconfigurator predicted (gpt-oss.sizingTables).
Returns a YAML list of sentences.
Usage: {{ range include "gpt-oss.warnings" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.warnings" -}}
{{- $plan := include "gpt-oss.plan" . | fromYaml }}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $tables := include "gpt-oss.sizingTables" . | fromYaml }}
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
{{- $slots := int $plan.decodeSlots }}
{{- if gt $concurrency $slots }}
{{- $parts := list }}
{{- range $plan.roles }}{{ if ne .mode "prefill" }}{{ $parts = append $parts
  (printf "%s: maxBatchSize %d x %d attention-DP ranks x %d replicas" .valuesKey (int .maxBatchSize) (int .attentionDpRanks)
  (int .replicas)) }}{{ end }}{{ end }}
{{- $warnings = append $warnings
  (printf "benchmark concurrency %d exceeds the %d decode slots (%s): %d requests will queue and inflate TTFT" $concurrency $slots (join "; " $parts)
  (sub $concurrency $slots)) }}
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
{{- /* Prefill tokens/s per GPU at the shortest tabulated prompt length that holds the benchmark's prompt. */}}
{{- $rows := get $sizing.prefillTokensPerSecondPerGpu $prefillQuant }}
{{- $prefillPerGpu := (last $rows).tokensPerSecondPerGpu }}
{{- range (reverse $rows) }}{{ if ge (int .isl) $isl }}{{ $prefillPerGpu = .tokensPerSecondPerGpu }}{{ end }}{{ end }}
{{- /* Inter-token latency at the sequences per decode GPU the benchmark fills (the next tabulated count up). */}}
{{- $decodeSlots := 0 }}
{{- $decodeGpus := 0 }}
{{- range $plan.roles }}{{ if ne .mode "prefill" }}{{ $decodeSlots = add $decodeSlots .slots }}{{ $decodeGpus = add $decodeGpus .gpus }}{{ end }}{{ end }}
{{- $perGpu := div (sub (add (min $decodeSlots $concurrency) $decodeGpus) 1) $decodeGpus }}
{{- $itlRows := get $sizing.interTokenLatencyMs $quant }}
{{- $itl := (last $itlRows).ms }}
{{- range (reverse $itlRows) }}{{ if ge (int .sequencesPerGpu) (int $perGpu) }}{{ $itl = .ms }}{{ end }}{{ end }}
{{- $prefillGpus := 0 }}
{{- range $plan.roles }}{{ if ne .mode "decode" }}{{ $prefillGpus = add $prefillGpus .gpus }}{{ end }}{{ end }}
{{- $prefillRate := divf (mul $prefillGpus (int $prefillPerGpu)) $isl }}
{{- $neededRate := divf (mul $concurrency 1000) (mulf $osl $itl) }}
{{- if lt (mulf $prefillRate 2) $neededRate }}
{{- /* Read from per-GPU tables, not the rendered engines (tools/plan.py --predict models those): prefill in
TensorRT-LLM's default 8192-token steps, decode on the tables' reference worker; the README's targets table
says why their figures differ. */}}
{{- $warnings = append $warnings
  (printf (print "prefill-bound: %d prefill %s about %.1f requests/s of %d tokens (in TensorRT-LLM's default "
  "8192-token steps), but %d users finishing %d tokens at %.1f ms/token (%d sequences per decode GPU) "
  "need about %.0f requests/s; expect TTFT to grow while requests queue for prefill (add prefill GPUs "
  "or replicas; per-GPU tables of %s; tools/plan.py --predict models the rendered engines)") $prefillGpus
  (ternary "GPU serves" "GPUs serve" (eq $prefillGpus 1)) $prefillRate $isl $concurrency $osl $itl (int $perGpu) $neededRate $tables.model) }}
{{- end }}
{{- $warnings = concat $warnings (include "gpt-oss.autoscalingWarnings" . | fromYamlArray) }}
{{- $warnings = concat $warnings (include "gpt-oss.engineKeyWarnings" . | fromYamlArray) }}
{{- toYaml $warnings }}
{{- end }}

{{/*
Graceful shutdown of every serving pod (trtllm-serve, the Dynamo frontend and workers), from gracefulShutdown:
the preStop wait, the longest request the deployment lets finish, the exit allowance, and the pod's
terminationGracePeriodSeconds, computed here and nowhere else:
  terminationGracePeriodSeconds = preStopSeconds + maxRequestSeconds + exitSeconds (30: the server's own exit after
  its last request, e.g. TensorRT-LLM freeing its engines; a SIGKILL then drops no request).
Usage: {{ $shutdown := include "gpt-oss.gracefulShutdown" . | fromYaml }}
*/}}
{{- define "gpt-oss.gracefulShutdown" -}}
{{- include "gpt-oss.memo" (list "gpt-oss.computeGracefulShutdown" .) }}
{{- end }}

{{/*
The computation behind gpt-oss.gracefulShutdown, run once per render (gpt-oss.memo keeps its text).
Usage: {{ include "gpt-oss.computeGracefulShutdown" . }} (templates read it through gpt-oss.gracefulShutdown)
*/}}
{{- define "gpt-oss.computeGracefulShutdown" -}}
{{- $g := .Values.gracefulShutdown }}
{{- $exitSeconds := 30 }}
preStopSeconds: {{ int $g.preStopSeconds }}
maxRequestSeconds: {{ int $g.maxRequestSeconds }}
exitSeconds: {{ $exitSeconds }}
terminationGracePeriodSeconds: {{ add (int $g.preStopSeconds) (int $g.maxRequestSeconds) $exitSeconds }}
formula: {{ printf "%d = preStopSeconds %d + maxRequestSeconds %d + exitSeconds %d"
  (add (int $g.preStopSeconds) (int $g.maxRequestSeconds) $exitSeconds) (int $g.preStopSeconds) (int $g.maxRequestSeconds) $exitSeconds | quote }}
{{- end }}

{{/*
The drain hooks of a serving container (port: its HTTP port; model: the name it serves): a preStop that marks the pod
draining and waits gracefulShutdown.preStopSeconds before the kubelet sends SIGTERM, and a readiness probe that fails
as soon as the mark exists (two probes 2 s apart), before the server stops or refuses anything; otherwise it is Ready
once /v1/models lists the model (the Dynamo 1.2.1 frontend's /health answers 200 "healthy" before any worker has
registered, and then a request would fail with "model not found").
Kubernetes takes a terminating pod out of its Service's ready endpoints at once; the wait covers the time kube-proxy,
ingress controllers and endpoint pickers take to notice, and the failing probe tells those that read readiness
(EndpointSlice `serving`, pod conditions). Needs /bin/sh and python3 in the image (every image the chart runs has them).
Usage: {{ include "gpt-oss.drainHooks" (dict "root" . "port" 8000 "model" "openai/gpt-oss-120b") | nindent 10 }}
*/}}
{{- define "gpt-oss.drainHooks" -}}
{{- $shutdown := include "gpt-oss.gracefulShutdown" .root | fromYaml }}
{{- $marker := "/tmp/gpt-oss-draining" }}
lifecycle:
  preStop:
    exec:
      command: ["/bin/sh", "-c", {{ printf "touch %s; sleep %d" $marker (int $shutdown.preStopSeconds) | quote }}]
readinessProbe:
  exec:
    command:
      - /bin/sh
      - -c
      - {{ printf (print "test ! -e %s && exec python3 -c 'import json, urllib.request as u; models = "
        "json.load(u.build_opener(u.ProxyHandler({})).open(\"http://127.0.0.1:%d/v1/models\", "
        "timeout=2))[\"data\"]; raise SystemExit(\"%s\" not in [m[\"id\"] for m in models])'") $marker (int .port) .model | quote }}
  periodSeconds: 2
  timeoutSeconds: 3
  failureThreshold: 2
{{- end }}
