{{- /* The Gateway API Inference Extension for trtllm-serve: InferencePool and the upstream endpoint picker (EPP). */}}

{{/*
Name of the InferencePool (the trtllm-serve pods it groups share the Deployment's name).
Usage: {{ include "gpt-oss.inferencePool.name" . }}
*/}}
{{- define "gpt-oss.inferencePool.name" -}}
{{- include "gpt-oss.trtllmServe.name" . }}
{{- end }}

{{/*
Name of the endpoint picker's Deployment, Service, ConfigMap, ServiceAccount, Role and RoleBinding.
Usage: {{ include "gpt-oss.endpointPicker.name" . }}
*/}}
{{- define "gpt-oss.endpointPicker.name" -}}
{{- printf "%s-epp" (include "gpt-oss.trtllmServe.name" .) }}
{{- end }}

{{/*
Labels that select the endpoint picker pod.
Usage: {{ include "gpt-oss.endpointPicker.selectorLabels" . | nindent 6 }}
*/}}
{{- define "gpt-oss.endpointPicker.selectorLabels" -}}
{{ include "gpt-oss.selectorLabels" . }}
app.kubernetes.io/component: endpoint-picker
{{- end }}

{{/*
Arguments of the endpoint picker: its pool and its config file. No metric flags: v1.5.0 refuses them ("flag
"total-queued-requests-metric" is deprecated and cannot be used; configure metrics via engineConfigs in
EndpointPickerConfig instead", for each of the queue, running, KV-cache, LoRA and cache-info flags): the metric names
and path are in the config (gpt-oss.endpointPicker.config). Its metrics port (9090) serves /metrics without
authentication (the picker's authentication needs token and access reviews, cluster-scoped grants the chart does not
make) and no profiling (--enable-pprof=false: v1.5.0 serves /debug/pprof/ there by default); with networkPolicy on,
only the Prometheus peers reach it.
Usage: {{ include "gpt-oss.endpointPicker.args" . | nindent 12 }}
*/}}
{{- define "gpt-oss.endpointPicker.args" -}}
- --pool-name
- {{ include "gpt-oss.inferencePool.name" . }}
- --pool-namespace
- {{ .Release.Namespace }}
- --pool-group
- inference.networking.k8s.io
- --zap-encoder
- json
- --config-file
- /config/default-plugins.yaml
- --tracing=false
- --metrics-endpoint-auth=false
- --enable-pprof=false
{{- end }}

{{/*
The EndpointPickerConfig: queue, KV-cache-utilization and prefix-cache scorers (weights 2, 2, 3 as the
upstream chart), metrics scraped from trtllm-serve's Prometheus endpoint, read by trtllm-serve's gauge names
(tensorrt_llm/metrics/collector.py @050f80de; the picker's own trtllm-serve mapping has the same): the queue, the
running requests, the KV-cache use, and the block size and count as gauges (trtllm-serve serves no cache-info
metric; LoRA: none). The gauges need TensorRT-LLM 1.3.0 or newer (gpt-oss.checkValues.monitoring).
Usage: {{ include "gpt-oss.endpointPicker.config" . | nindent 4 }}
*/}}
{{- define "gpt-oss.endpointPicker.config" -}}
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
  - type: queue-scorer
  - type: kv-cache-utilization-scorer
  - type: prefix-cache-scorer
  - type: metrics-data-source
    parameters:
      scheme: http
      path: /prometheus/metrics
      insecureSkipVerify: true
  - type: core-metrics-extractor
    parameters:
      defaultEngine: trtllm-serve
      engineConfigs:
        - name: trtllm-serve
          queuedRequestsSpec: trtllm_num_requests_waiting
          runningRequestsSpec: trtllm_num_requests_running
          kvUsageSpec: trtllm_kv_cache_utilization
          loraSpec: ""
          cacheInfoSpec: ""
          cacheBlockSizeSpec: trtllm_kv_cache_tokens_per_block
          cacheNumBlocksSpec: trtllm_kv_cache_max_blocks
schedulingProfiles:
  - name: default
    plugins:
      - pluginRef: queue-scorer
        weight: 2
      - pluginRef: kv-cache-utilization-scorer
        weight: 2
      - pluginRef: prefix-cache-scorer
        weight: 3
{{- end }}
