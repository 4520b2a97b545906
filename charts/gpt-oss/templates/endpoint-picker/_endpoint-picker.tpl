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
Arguments of the endpoint picker: its pool, config file, and the trtllm-serve metric names and path the
GAIE v1.5.0 chart sets for modelServerType trtllm-serve (written --flag=value, without the quotes that
chart leaves inside its values), except the cache-info metric: TensorRT-LLM names it trtllm_kv_cache_config_info
(tensorrt_llm/metrics/collector.py @050f80de; nothing serves trtllm_cache_config_info). The gauges need TensorRT-LLM
1.3.0 or newer (gpt-oss.checkValues.monitoring). LoRA metrics off, trtllm-serve has none.
Usage: {{ include "gpt-oss.endpointPicker.args" . | nindent 12 }}
*/}}
{{- define "gpt-oss.endpointPicker.args" -}}
- --pool-name
- {{ include "gpt-oss.inferencePool.name" . }}
- --pool-namespace
- {{ .Release.Namespace }}
- --pool-group
- inference.networking.k8s.io
- --total-queued-requests-metric=trtllm_num_requests_waiting
- --total-running-requests-metric=trtllm_num_requests_running
- --kv-cache-usage-percentage-metric=trtllm_kv_cache_utilization
- --cache-info-metric=trtllm_kv_cache_config_info
- --model-server-metrics-path=/prometheus/metrics
- --lora-info-metric
- ""
- --zap-encoder
- json
- --config-file
- /config/default-plugins.yaml
- --tracing=false
- --metrics-endpoint-auth=false
{{- end }}

{{/*
The EndpointPickerConfig: queue, KV-cache-utilization and prefix-cache scorers (weights 2, 2, 3 as the
upstream chart), metrics scraped from trtllm-serve's Prometheus endpoint.
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
