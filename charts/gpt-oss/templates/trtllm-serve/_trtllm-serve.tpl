{{- /* The trtllm-serve runtime (runtime: trtllm-serve): TensorRT-LLM's own OpenAI server, no Dynamo. */}}

{{/*
Name of the trtllm-serve Deployment and of its Service.
Usage: {{ include "gpt-oss.trtllmServe.name" . }}
*/}}
{{- define "gpt-oss.trtllmServe.name" -}}
{{- printf "%s-trtllm-serve" (include "gpt-oss.fullname" .) }}
{{- end }}

{{/*
In-cluster URL of the trtllm-serve Service.
Usage: {{ include "gpt-oss.trtllmServe.url" . }}
*/}}
{{- define "gpt-oss.trtllmServe.url" -}}
{{- printf "http://%s.%s.svc:%d" (include "gpt-oss.trtllmServe.name" .) .Release.Namespace (int .Values.trtllmServe.httpPort) }}
{{- end }}

{{/*
Model name trtllm-serve answers to: a local checkpoint is served under its folder name (OpenAIServer),
and this trtllm-serve has no --served_model_name, so clients must use that name.
Usage: {{ include "gpt-oss.trtllmServe.servedModelName" . }}
*/}}
{{- define "gpt-oss.trtllmServe.servedModelName" -}}
{{- base (include "gpt-oss.modelPath" .) }}
{{- end }}

{{/*
Labels that select the trtllm-serve pods: the release's selector labels plus the component, so the
Service never routes to the release's other pods (download, smoke test, benchmark).
Usage: {{ include "gpt-oss.trtllmServe.selectorLabels" . | nindent 6 }}
*/}}
{{- define "gpt-oss.trtllmServe.selectorLabels" -}}
{{ include "gpt-oss.selectorLabels" . }}
app.kubernetes.io/component: trtllm-serve
{{- end }}

{{/*
MoE backend: engine.moe_config.backend when the user sets it, else the one for the GPU family
(trtllmServe.moeBackend.blackwell or .hopper; the guide puts Hopper on OpenAI's Triton kernels).
Usage: {{ include "gpt-oss.trtllmServe.moeBackend" . }}
*/}}
{{- define "gpt-oss.trtllmServe.moeBackend" -}}
{{- $gpu := index . (include "gpt-oss.object" (list "gpt-oss.gpuFacts" .)) }}
{{- $explicit := get (get (default dict .Values.trtllmServe.engine) "moe_config" | default dict) "backend" }}
{{- $explicit | default (ternary .Values.trtllmServe.moeBackend.blackwell .Values.trtllmServe.moeBackend.hopper (and $gpu.blackwell true)) }}
{{- end }}

{{/*
"true" when the server must serve Prometheus text at /prometheus/metrics (a PodMonitor scrapes it, its
autoscaler or an inference pool reads it), else "": TensorRT-LLM mounts that path only with
return_perf_metrics, and fills the iteration gauges only with enable_iter_perf_stats.
Usage: {{ if include "gpt-oss.trtllmServe.exposesMetrics" . }}
*/}}
{{- define "gpt-oss.trtllmServe.exposesMetrics" -}}
{{- if or .Values.monitoring.podMonitor.enabled .Values.trtllmServe.autoscaling.enabled .Values.inferencePool.enabled }}true{{ end }}
{{- end }}

{{/*
The extra_llm_api_options YAML: the user's engine keys, enable_attention_dp and the MoE backend, and the
metrics switches when the server exposes metrics. Parallelism, batch size and KV fraction go on the
command line, as in the guide.
Usage: {{ include "gpt-oss.trtllmServe.engineConfig" . }}
*/}}
{{- define "gpt-oss.trtllmServe.engineConfig" -}}
{{- $engine := deepCopy (default dict .Values.trtllmServe.engine) }}
{{- $_ := set $engine "enable_attention_dp" (and .Values.trtllmServe.attentionDP true) }}
{{- if include "gpt-oss.trtllmServe.exposesMetrics" . }}
{{- $_ = set $engine "return_perf_metrics" true }}
{{- $_ = set $engine "enable_iter_perf_stats" true }}
{{- end }}
{{- $moe := deepCopy (get $engine "moe_config" | default dict) }}
{{- $_ = set $moe "backend" (include "gpt-oss.trtllmServe.moeBackend" .) }}
{{- $_ = set $engine "moe_config" $moe }}
{{- toYaml $engine }}
{{- end }}

{{/*
Arguments of trtllm-serve (the guide's command line); every option is in the pinned trtllm-serve's
list (_trtllm-serve-options.tpl), which tests/chart/trtllm_serve/test_trtllm_serve.py checks.
Usage: {{ include "gpt-oss.trtllmServe.args" . | nindent 12 }}
*/}}
{{- define "gpt-oss.trtllmServe.args" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $server := index $plan.roles 0 }}
{{- $t := .Values.trtllmServe -}}
- {{ include "gpt-oss.modelPath" . | quote }}
- --host
- 0.0.0.0
- --port
- {{ int $t.httpPort | quote }}
- --backend
- pytorch
- --tp_size
- {{ int $server.gpusPerReplica | quote }}
- --ep_size
- {{ int $server.gpusPerReplica | quote }}
{{- if not (kindIs "invalid" $t.maxBatchSize) }}
- --max_batch_size
- {{ int $t.maxBatchSize | quote }}
{{- end }}
- --trust_remote_code
- --extra_llm_api_options
- /engine/trtllm-serve.yaml
- --kv_cache_free_gpu_memory_fraction
- {{ $t.freeGpuMemoryFraction | toString | quote }}
{{- range $t.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
Environment of the server: the guide's variables, quantization override, vocabulary, HOME and
HF_HUB_OFFLINE=1 (no HF token: the server loads from the model cache, never from the hub).
Usage: {{ include "gpt-oss.trtllmServe.env" . | nindent 12 }}
*/}}
{{- define "gpt-oss.trtllmServe.env" -}}
{{- $env := deepCopy (default dict .Values.trtllmServe.env) }}
{{- with .Values.trtllmServe.overrideQuantAlgo }}
{{- $_ := set $env "OVERRIDE_QUANT_ALGO" . }}
{{- end }}
{{- if .Values.model.tiktoken.stage }}
{{- $_ := set $env "TIKTOKEN_ENCODINGS_BASE" (include "gpt-oss.tiktokenDir" .) }}
{{- end }}
{{- /* Non-root: caches (torch, Triton, Hugging Face) go to a writable emptyDir. */}}
{{- $_ := set $env "HOME" "/tmp" }}
{{- $_ := set $env "HF_HUB_OFFLINE" "1" }}
{{- $list := list }}
{{- range $name := keys $env | sortAlpha }}
{{- $list = append $list (dict "name" $name "value" (include "gpt-oss.scalarString" (get $env $name))) }}
{{- end }}
{{- toYaml $list }}
{{- end }}

{{/*
Node selector of the server pods: gpt-oss.gpuNodeSelector and the user's extra labels (which win).
Usage: {{ include "gpt-oss.trtllmServe.nodeSelector" . | nindent 8 }}
*/}}
{{- define "gpt-oss.trtllmServe.nodeSelector" -}}
{{- include "gpt-oss.stringMap" (merge (deepCopy .Values.trtllmServe.nodeSelector) (include "gpt-oss.gpuNodeSelector" . | fromJson)) }}
{{- end }}

{{/*
Rolling update of the server Deployment that keeps serving capacity: with two or more replicas (the autoscaler's
minReplicas when one owns the count) one pod is replaced at a time and no surge pod needs a spare set of GPUs
(maxSurge 0, maxUnavailable 1); with one replica the new pod must be Ready before the old one stops (maxSurge 1,
maxUnavailable 0), which needs a second set of trtllmServe.gpus free during the upgrade.
Usage: {{ include "gpt-oss.trtllmServe.rollingUpdate" . | nindent 6 }}
*/}}
{{- define "gpt-oss.trtllmServe.rollingUpdate" -}}
{{- $plan := index . (include "gpt-oss.object" (list "gpt-oss.plan" .)) }}
{{- $server := index $plan.roles 0 }}
{{- if ge (int $server.minReplicas) 2 }}
maxSurge: 0
maxUnavailable: 1
{{- else }}
maxSurge: 1
maxUnavailable: 0
{{- end }}
{{- end }}

{{/*
The queue signal the trtllm-serve scaler reads by default: requests waiting in the server's queue. On a release that
serves the gauge (gpt-oss.trtllmServe.release servesGauges yes) trtllm_num_requests_waiting itself; else a minute's
rate of the request_queue_time_seconds sum, which by Little's law is the average number waiting and which every
release since 1.0 serves (with or without the trtllm_ prefix). metric: the name an HPA asks for; query: KEDA's
PromQL; adapterQuery: what prometheus-adapter answers under docs/monitoring.md's rules. Each pod counted once.
Usage: {{ $signal := include "gpt-oss.trtllmServe.queueSignal" (dict "root" $ "selector" $series.trtllmServe) | fromYaml }}
*/}}
{{- define "gpt-oss.trtllmServe.queueSignal" -}}
{{- $release := include "gpt-oss.trtllmServe.release" .root | fromYaml }}
{{- $namespace := printf "namespace=%q" .root.Release.Namespace }}
{{- if eq (toString $release.servesGauges) "yes" }}
metric: trtllm_num_requests_waiting
query: {{ printf "sum(max by (namespace, pod) (trtllm_num_requests_waiting{%s}))" .selector | quote }}
adapterQuery: {{ printf "sum(max by (namespace, pod) (trtllm_num_requests_waiting{%s}))" $namespace | quote }}
{{- else }}
metric: trtllm_request_queue_time_seconds_sum
query: {{ printf "sum(max by (namespace, pod) (rate({__name__=~\"(trtllm_)?request_queue_time_seconds_sum\",%s}[1m])))" .selector | quote }}
adapterQuery: {{ printf "sum(max by (namespace, pod) (rate({__name__=~\"(trtllm_)?request_queue_time_seconds_sum\",%s}[1m])))" $namespace | quote }}
{{- end }}
{{- end }}
