{{/*
Chart name, truncated to the 63 characters a label allows.
Usage: {{ include "gpt-oss.name" . }}
*/}}
{{- define "gpt-oss.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every resource name: the release name, plus the chart name unless the release has it.
Usage: {{ include "gpt-oss.fullname" . }}
*/}}
{{- define "gpt-oss.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Standard labels of every object; pass a dict with the root context and a component name.
Usage: {{ include "gpt-oss.labels" (dict "root" $ "component" "benchmark") }}
*/}}
{{- define "gpt-oss.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gpt-oss.selectorLabels" .root }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: gpt-oss
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/*
Selector labels: name and instance only, so they never change on upgrade.
Usage: {{ include "gpt-oss.selectorLabels" . }}
*/}}
{{- define "gpt-oss.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpt-oss.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Name of the model-cache PVC: the existing claim when given, else the chart's own.
Usage: {{ include "gpt-oss.modelCache.claimName" . }}
*/}}
{{- define "gpt-oss.modelCache.claimName" -}}
{{- default (printf "%s-model-cache" (include "gpt-oss.fullname" .)) .Values.modelCache.existingClaim }}
{{- end }}

{{/*
Directory of the model weights inside every pod.
Usage: {{ include "gpt-oss.modelPath" . }}
*/}}
{{- define "gpt-oss.modelPath" -}}
{{- printf "%s/%s" (trimSuffix "/" .Values.modelCache.mountPath) .Values.model.id }}
{{- end }}

{{/*
Marker file the download Job writes when the pinned revision is complete; workers wait for it.
Usage: {{ include "gpt-oss.modelMarker" . }}
*/}}
{{- define "gpt-oss.modelMarker" -}}
{{- printf "%s/.download-complete-%s" (include "gpt-oss.modelPath" .) .Values.model.revision }}
{{- end }}

{{/*
In-cluster URL of the frontend Service the Dynamo operator creates (<dgd name>-frontend).
Usage: {{ include "gpt-oss.frontendUrl" . }}
*/}}
{{- define "gpt-oss.frontendUrl" -}}
{{- printf "http://%s-frontend.%s.svc:%d" (include "gpt-oss.fullname" .) .Release.Namespace (int .Values.frontend.httpPort) }}
{{- end }}

{{/*
Image reference repository:tag; a tag starting with sha256: is written as a digest.
Usage: {{ include "gpt-oss.image" .Values.dynamo.image }}
*/}}
{{- define "gpt-oss.image" -}}
{{- if hasPrefix "sha256:" (toString .tag) }}
{{- printf "%s@%s" .repository .tag }}
{{- else }}
{{- printf "%s:%s" .repository (toString .tag) }}
{{- end }}
{{- end }}

{{/*
Facts per GPU type: usual GPUs per node, memory software sees (MiB, FACTS.md), Blackwell or not.
Usage: {{ $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
*/}}
{{- define "gpt-oss.gpuFacts" -}}
{{- $table := dict
  "GB200" (dict "perNode" 4 "memoryMiB" 189471 "blackwell" true)
  "B200" (dict "perNode" 8 "memoryMiB" 183359 "blackwell" true)
  "H200" (dict "perNode" 8 "memoryMiB" 143771 "blackwell" false)
  "H100" (dict "perNode" 8 "memoryMiB" 81559 "blackwell" false) }}
{{- $facts := deepCopy (get $table .Values.gpu.type) }}
{{- if not (kindIs "invalid" .Values.gpu.perNode) }}
{{- $_ := set $facts "perNode" (int .Values.gpu.perNode) }}
{{- end }}
{{- toYaml $facts }}
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
The plan: every number the chart computes (GPUs per role and in total, decode slots, benchmark
concurrency and request count), computed here once and read by every template and the tests.
Usage: {{ $plan := include "gpt-oss.plan" . | fromYaml }}
*/}}
{{- define "gpt-oss.plan" -}}
{{- include "gpt-oss.checkValues" . }}
{{- $roles := list }}
{{- $totalGpus := 0 }}
{{- range $row := include "gpt-oss.roleTable" . | fromYamlArray }}
{{- $role := get $.Values.workers $row.key }}
{{- if $role.enabled }}
{{- $gpusPerReplica := mul (int $role.tensorParallelSize) (int $role.pipelineParallelSize) }}
{{- $gpus := mul $gpusPerReplica (int $role.replicas) }}
{{- $dpRanks := ternary (int $role.tensorParallelSize) 1 (and $role.attentionDP true) }}
{{- $slots := mul (int $role.maxBatchSize) $dpRanks (int $role.replicas) }}
{{- $roles = append $roles (dict "key" $row.key "component" $row.component "mode" $row.mode "replicas" (int $role.replicas) "gpusPerReplica" $gpusPerReplica "gpus" $gpus "attentionDpRanks" $dpRanks "slots" $slots) }}
{{- $totalGpus = add $totalGpus $gpus }}
{{- end }}
{{- end }}
{{- $bench := .Values.benchmark }}
{{- $benchGpus := ternary $totalGpus (int $bench.gpuCount) (kindIs "invalid" $bench.gpuCount) }}
{{- $concurrency := ternary (mul (int $bench.concurrencyPerGpu) $benchGpus) (int $bench.concurrency) (kindIs "invalid" $bench.concurrency) }}
{{- $requests := ternary (mul (int $bench.requestCountMultiplier) $concurrency) (int $bench.requestCount) (kindIs "invalid" $bench.requestCount) }}
{{- $disaggregated := false }}
{{- range $roles }}{{ if ne .mode "agg" }}{{ $disaggregated = true }}{{ end }}{{ end }}
roles: {{ toYaml $roles | nindent 2 }}
totalGpus: {{ $totalGpus }}
disaggregated: {{ $disaggregated }}
benchmark:
  gpuCount: {{ $benchGpus }}
  concurrency: {{ $concurrency }}
  requestCount: {{ $requests }}
{{- end }}

{{/*
Decode capacity in requests the engines batch at once: decode roles when disaggregated, else workers.
Usage: {{ include "gpt-oss.decodeSlots" $plan }}
*/}}
{{- define "gpt-oss.decodeSlots" -}}
{{- $slots := 0 }}
{{- range .roles }}{{ if ne .mode "prefill" }}{{ $slots = add $slots .slots }}{{ end }}{{ end }}
{{- $slots }}
{{- end }}

{{/*
A worker role's TensorRT-LLM engine settings: its free-form engine keys plus the keys the chart
derives from the role's structured fields (parallelism, batch, tokens, memory fraction).
Usage: {{ include "gpt-oss.engineConfig" (dict "role" .Values.workers.prefill) | fromYaml }}
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
{{- $_ = set $engine "kv_cache_config" $kv }}
{{- toYaml $engine }}
{{- end }}

{{/*
Command-line arguments of one worker role's dynamo.trtllm process.
Usage: {{ include "gpt-oss.workerArgs" (dict "root" $ "row" $row) }}
*/}}
{{- define "gpt-oss.workerArgs" -}}
- --model-path
- {{ include "gpt-oss.modelPath" .root | quote }}
- --served-model-name
- {{ .root.Values.model.id | quote }}
- --extra-engine-args
- {{ printf "/engine/%s.yaml" .row.key | quote }}
- --dyn-reasoning-parser
- gpt_oss
- --dyn-tool-call-parser
- harmony
{{- if ne .row.mode "agg" }}
- --disaggregation-mode
- {{ .row.mode }}
{{- end }}
{{- range .root.Values.workers.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
Environment of one worker role: shared worker env, role env, quantization override, HF token.
Usage: {{ include "gpt-oss.workerEnv" (dict "root" $ "role" $role) }}
*/}}
{{- define "gpt-oss.workerEnv" -}}
{{- $env := merge (deepCopy (default dict .role.env)) (deepCopy (default dict .root.Values.workers.env)) }}
{{- with .root.Values.workers.overrideQuantAlgo }}
{{- $_ := set $env "OVERRIDE_QUANT_ALGO" . }}
{{- end }}
{{- if .root.Values.model.tiktoken.stage }}
{{- $_ := set $env "TIKTOKEN_ENCODINGS_BASE" (include "gpt-oss.tiktokenDir" .root) }}
{{- end }}
{{- $list := list }}
{{- range $name := keys $env | sortAlpha }}
{{- $list = append $list (dict "name" $name "value" (get $env $name | toString)) }}
{{- end }}
{{- $list = concat $list (include "gpt-oss.hfTokenEnv" .root | fromYamlArray) }}
{{- toYaml $list }}
{{- end }}

{{/*
Optional HF_TOKEN from the user's Secret, by reference; absent Secret is fine (the model is not gated).
Usage: {{ include "gpt-oss.hfTokenEnv" . | nindent 12 }}
*/}}
{{- define "gpt-oss.hfTokenEnv" -}}
{{- with .Values.huggingface.tokenSecret.name }}
{{- $ref := dict "name" . "key" $.Values.huggingface.tokenSecret.key "optional" true }}
{{- toYaml (list (dict "name" "HF_TOKEN" "valueFrom" (dict "secretKeyRef" $ref))) }}
{{- end }}
{{- end }}

{{/*
Init container that holds a pod until the download marker exists, saying what it waits for.
Usage: {{ include "gpt-oss.waitForModelContainer" . | nindent 8 }}
*/}}
{{- define "gpt-oss.waitForModelContainer" -}}
- name: wait-for-model
  image: {{ include "gpt-oss.image" .Values.waitForModel.image }}
  imagePullPolicy: {{ .Values.waitForModel.image.pullPolicy }}
  command:
    - sh
    - -c
    - |
      marker={{ include "gpt-oss.modelMarker" . }}
      until [ -f "$marker" ]; do
        echo "waiting for $marker: the model-cache download Job ({{ include "gpt-oss.downloadJobName" . }}) writes it when {{ .Values.model.id }}@{{ .Values.model.revision }} is complete"
        sleep 30
      done
      echo "model cache ready: $marker"
  securityContext: {{ toYaml .Values.securityContext.container | nindent 4 }}
  resources:
    requests:
      cpu: 10m
      memory: 16Mi
    limits:
      memory: 32Mi
  volumeMounts:
    - name: model-cache
      mountPath: {{ .Values.modelCache.mountPath }}
      readOnly: true
{{- end }}

{{/*
Node selector of GPU worker pods: architecture, GPU product label, and the user's extra labels.
Usage: {{ include "gpt-oss.workerNodeSelector" . | nindent 8 }}
*/}}
{{- define "gpt-oss.workerNodeSelector" -}}
{{- $selector := dict "kubernetes.io/arch" .Values.gpu.nodeArch }}
{{- with .Values.gpu.productLabel }}
{{- $_ := set $selector "nvidia.com/gpu.product" . }}
{{- end }}
{{- toYaml (merge (deepCopy .Values.workers.nodeSelector) $selector) }}
{{- end }}

{{/*
Pod affinity that puts every worker pod of the release on one node; each pod matches its own
term, so the first one schedules freely and the others follow it.
Usage: {{ include "gpt-oss.sameNodeAffinity" . | nindent 8 }}
*/}}
{{- define "gpt-oss.sameNodeAffinity" -}}
podAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "gpt-oss.selectorLabels" . | nindent 10 }}
          app.kubernetes.io/component: worker
{{- end }}

{{/*
Name of the ConfigMap with the scripts the Jobs and test hooks run.
Usage: {{ include "gpt-oss.scriptsConfigMap" . }}
*/}}
{{- define "gpt-oss.scriptsConfigMap" -}}
{{- printf "%s-scripts" (include "gpt-oss.fullname" .) }}
{{- end }}

{{/*
Name of the download Job, suffixed with a hash of what its pod runs: a changed image, version or
revision makes a new Job on upgrade instead of patching an immutable pod template.
Usage: {{ include "gpt-oss.downloadJobName" . }}
*/}}
{{- define "gpt-oss.downloadJobName" -}}
{{- $inputs := dict "model" .Values.model "download" .Values.modelCache.download "mountPath" .Values.modelCache.mountPath "claim" (include "gpt-oss.modelCache.claimName" .) }}
{{- printf "%s-model-download-%s" (include "gpt-oss.fullname" . | trunc 40 | trimSuffix "-") (toJson $inputs | sha256sum | trunc 8) }}
{{- end }}

{{/*
Pod-level security context of every pod the chart defines.
Usage: {{ include "gpt-oss.podSecurityContext" . | nindent 6 }}
*/}}
{{- define "gpt-oss.podSecurityContext" -}}
securityContext: {{ toYaml .Values.securityContext.pod | nindent 2 }}
{{- end }}

{{/*
URL the smoke test and the benchmark use: frontend.urlOverride, else the in-cluster Service.
Usage: {{ include "gpt-oss.clientUrl" . }}
*/}}
{{- define "gpt-oss.clientUrl" -}}
{{- default (include "gpt-oss.frontendUrl" .) .Values.frontend.urlOverride }}
{{- end }}

{{/*
The AIPerf command line of the benchmark, every number final (from gpt-oss.plan).
Usage: {{ include "gpt-oss.benchmarkCommand" . | nindent 12 }}
*/}}
{{- define "gpt-oss.benchmarkCommand" -}}
{{- $plan := include "gpt-oss.plan" . | fromYaml }}
{{- $bench := .Values.benchmark -}}
- aiperf
- profile
- --model
- {{ .Values.model.id | quote }}
- --tokenizer
- {{ include "gpt-oss.modelPath" . | quote }}
- --endpoint-type
- chat
- --endpoint
- /v1/chat/completions
- --streaming
- --url
- {{ include "gpt-oss.clientUrl" . | quote }}
- --synthetic-input-tokens-mean
- {{ int $bench.inputTokensMean | quote }}
{{- if not (kindIs "invalid" $bench.inputTokensStddev) }}
- --synthetic-input-tokens-stddev
- {{ $bench.inputTokensStddev | toString | quote }}
{{- end }}
- --output-tokens-mean
- {{ int $bench.outputTokensMean | quote }}
{{- if not (kindIs "invalid" $bench.outputTokensStddev) }}
- --output-tokens-stddev
- {{ $bench.outputTokensStddev | toString | quote }}
{{- end }}
{{- range $bench.extraInputs }}
- --extra-inputs
- {{ . | quote }}
{{- end }}
- --concurrency
- {{ int $plan.benchmark.concurrency | quote }}
- --request-count
- {{ int $plan.benchmark.requestCount | quote }}
{{- if not (kindIs "invalid" $bench.warmupRequestCount) }}
- --warmup-request-count
- {{ int $bench.warmupRequestCount | quote }}
{{- end }}
{{- if not (kindIs "invalid" $bench.numDatasetEntries) }}
- --num-dataset-entries
- {{ int $bench.numDatasetEntries | quote }}
{{- end }}
{{- if not (kindIs "invalid" $bench.randomSeed) }}
- --random-seed
- {{ int $bench.randomSeed | quote }}
{{- end }}
{{- range $bench.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
Pod-level settings shared by every worker role: placement, security, init wait and volumes.
Usage: {{ include "gpt-oss.workerPodSpec" . | nindent 8 }}
*/}}
{{- define "gpt-oss.workerPodSpec" -}}
{{- include "gpt-oss.podSecurityContext" . }}
nodeSelector: {{ include "gpt-oss.workerNodeSelector" . | nindent 2 }}
{{- with .Values.workers.tolerations }}
tolerations: {{ toYaml . | nindent 2 }}
{{- end }}
{{- if .Values.workers.sameNode }}
affinity: {{ include "gpt-oss.sameNodeAffinity" . | nindent 2 }}
{{- end }}
{{- with .Values.dynamo.imagePullSecrets }}
imagePullSecrets: {{ toYaml . | nindent 2 }}
{{- end }}
initContainers: {{ include "gpt-oss.waitForModelContainer" . | nindent 2 }}
volumes:
  - name: model-cache
    persistentVolumeClaim:
      claimName: {{ include "gpt-oss.modelCache.claimName" . }}
  - name: engine-config
    configMap:
      name: {{ include "gpt-oss.fullname" . }}-engine
{{- end }}

{{/*
Main-container fields of one worker role, shared by both DGD API versions.
Usage: {{ include "gpt-oss.workerContainer" (dict "root" $ "row" $row) | nindent 10 }}
*/}}
{{- define "gpt-oss.workerContainer" -}}
image: {{ include "gpt-oss.image" .root.Values.dynamo.image }}
imagePullPolicy: {{ .root.Values.dynamo.image.pullPolicy }}
command: ["python3", "-m", "dynamo.trtllm"]
args: {{ include "gpt-oss.workerArgs" . | nindent 2 }}
securityContext: {{ toYaml .root.Values.securityContext.container | nindent 2 }}
volumeMounts:
  - name: engine-config
    mountPath: /engine
    readOnly: true
{{- end }}

{{/*
Main-container fields of the frontend, shared by both DGD API versions.
Usage: {{ include "gpt-oss.frontendContainer" . | nindent 10 }}
*/}}
{{- define "gpt-oss.frontendContainer" -}}
image: {{ include "gpt-oss.image" .Values.dynamo.image }}
imagePullPolicy: {{ .Values.dynamo.image.pullPolicy }}
command: ["python3", "-m", "dynamo.frontend"]
args:
  - --router-mode
  - {{ .Values.frontend.routerMode }}
  - --http-port
  - {{ int .Values.frontend.httpPort | quote }}
securityContext: {{ toYaml .Values.securityContext.container | nindent 2 }}
{{- if .Values.model.tiktoken.stage }}
env:
  # The harmony tool-call parser reads its vocabulary here instead of fetching it.
  - name: TIKTOKEN_ENCODINGS_BASE
    value: {{ include "gpt-oss.tiktokenDir" . | quote }}
{{- end }}
{{- end }}

{{/*
Sizing warnings: configurations that render and run, but badly. Uses FACTS.md's KV formula
(18*L*1024*b + 18*min(L,128)*1024*b bytes per sequence of L tokens) and GPU memory, and the sizing
assumptions in values (sizing.*). Returns a YAML list of sentences.
Usage: {{ range include "gpt-oss.warnings" . | fromYamlArray }}
*/}}
{{- define "gpt-oss.warnings" -}}
{{- $plan := include "gpt-oss.plan" . | fromYaml }}
{{- $gpu := include "gpt-oss.gpuFacts" . | fromYaml }}
{{- $bench := .Values.benchmark }}
{{- $sizing := .Values.sizing }}
{{- $concurrency := int $plan.benchmark.concurrency }}
{{- $isl := int $bench.inputTokensMean }}
{{- $osl := int $bench.outputTokensMean }}
{{- $warnings := list }}
{{- $slots := int (include "gpt-oss.decodeSlots" $plan) }}
{{- if gt $concurrency $slots }}
{{- $parts := list }}
{{- range $plan.roles }}{{ if ne .mode "prefill" }}{{ $parts = append $parts (printf "workers.%s: maxBatchSize %d x %d attention-DP ranks x %d replicas" .key (int (get $.Values.workers .key).maxBatchSize) (int .attentionDpRanks) (int .replicas)) }}{{ end }}{{ end }}
{{- $warnings = append $warnings (printf "benchmark concurrency %d exceeds the %d decode slots (%s): %d requests will queue and inflate TTFT" $concurrency $slots (join "; " $parts) (sub $concurrency $slots)) }}
{{- end }}
{{- range $plan.roles }}
{{- if ne .mode "prefill" }}
{{- $role := get $.Values.workers .key }}
{{- $kvDtype := get (get (default dict $role.engine) "kv_cache_config" | default dict) "dtype" | default "auto" }}
{{- $bytesPerValue := ternary 1 2 (eq $kvDtype "fp8") }}
{{- $tokens := add $isl $osl }}
{{- $perSequence := mul 18 1024 $bytesPerValue (add $tokens (min $tokens 128)) }}
{{- $needGiB := divf (mul $perSequence $concurrency) 1073741824.0 }}
{{- $gpuGiB := divf (int $gpu.memoryMiB) 1024.0 }}
{{- $weightsGiB := divf $sizing.weightsGiB (int .gpusPerReplica) }}
{{- $freeGiB := mulf (subf $gpuGiB $weightsGiB) $role.freeGpuMemoryFraction (int .gpus) }}
{{- if gt $needGiB $freeGiB }}
{{- $warnings = append $warnings (printf "KV cache too small for the benchmark on workers.%s: %d sequences of %d tokens need %.0f GiB of %s KV cache, but %d %s GPUs keep about %.0f GiB (free_gpu_memory_fraction %v of the memory left after %.1f GiB of weights per GPU); requests will be evicted or queue" .key $concurrency $tokens $needGiB (ternary "fp8" "bf16" (eq $kvDtype "fp8")) (int .gpus) $.Values.gpu.type $freeGiB $role.freeGpuMemoryFraction $weightsGiB) }}
{{- end }}
{{- end }}
{{- end }}
{{- $prefillGpus := 0 }}
{{- range $plan.roles }}{{ if ne .mode "decode" }}{{ $prefillGpus = add $prefillGpus .gpus }}{{ end }}{{ end }}
{{- $prefillRate := divf (mul $prefillGpus (int $sizing.prefillTokensPerSecondPerGpu)) $isl }}
{{- $neededRate := divf (mul $concurrency 1000) (mul $osl (int $sizing.interTokenLatencyMs)) }}
{{- if lt (mulf $prefillRate 2) $neededRate }}
{{- $warnings = append $warnings (printf "prefill-bound: %d prefill GPUs serve about %.1f requests/s of %d tokens, but %d users finishing %d tokens at %d ms/token need about %.0f requests/s; expect TTFT to grow while requests queue for prefill (add prefill GPUs or replicas)" $prefillGpus $prefillRate $isl $concurrency $osl (int $sizing.interTokenLatencyMs) $neededRate) }}
{{- end }}
{{- toYaml $warnings }}
{{- end }}

{{/*
Directory on the model cache holding the staged harmony vocabulary (o200k_base.tiktoken).
Usage: {{ include "gpt-oss.tiktokenDir" . }}
*/}}
{{- define "gpt-oss.tiktokenDir" -}}
{{- printf "%s/tiktoken" (trimSuffix "/" .Values.modelCache.mountPath) }}
{{- end }}
